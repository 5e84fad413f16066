import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { CUSTOMER_ENV, childExit, runChild, startAsUser, toolEnv } from "@/lib/provisioning/system";

// One way to start a child (DESIGN.md "The outside world"): lib/provisioning/system.ts, whose
// startChild takes the child's whole environment. A child never inherits the panel's, which holds
// what panel.env set (DATABASE_URL, MYSQL_PROVISION_URL, AUTH_SECRET).

const APP_CODE = ["lib", "db", "app", "server.ts", "instrumentation.ts", "proxy.ts"];

function sourceFiles(entry: string): string[] {
  if (!fs.existsSync(entry)) return [];
  if (!fs.statSync(entry).isDirectory()) return /\.tsx?$/.test(entry) ? [entry] : [];
  return fs.readdirSync(entry).flatMap((name) => sourceFiles(path.join(entry, name)));
}

test("no code of the panel but lib/provisioning/system.ts starts a process", () => {
  const starters = APP_CODE.flatMap(sourceFiles).filter((file) => {
    if (file === path.join("lib", "provisioning", "system.ts")) return false;
    const text = fs.readFileSync(file, "utf8");
    // `import type` is only a type; anything else from child_process can start a process.
    return /^import (?!type )[^;]*from "(node:)?child_process"/m.test(text) || /require\(["'](node:)?child_process/.test(text);
  });
  assert.deepEqual(starters, []);
});

test("a child sees only the environment it is given", async () => {
  process.env.PANEL_TEST_SECRET = "must-not-travel";
  try {
    const result = await runChild("env", [], { env: toolEnv({ EXTRA: "1" }) });
    const names = result.stdout.trim().split("\n").map((line) => line.split("=")[0]).sort();
    assert.deepEqual(names, ["EXTRA", "LANG", "PATH"]);
  } finally {
    delete process.env.PANEL_TEST_SECRET;
  }
});

test("a customer's program gets the fixed customer environment, whatever the panel's", async () => {
  assert.deepEqual(Object.keys(CUSTOMER_ENV).sort(), ["LANG", "PATH"]);
  process.env.PANEL_TEST_SECRET = "must-not-travel";
  try {
    const child = startAsUser("nobody", "env", []);
    let output = "";
    child.stdout!.on("data", (chunk) => (output += chunk));
    assert.equal((await childExit(child)).code, 0);
    // runuser adds who the user is (HOME, USER, LOGNAME), nothing else.
    const names = output.trim().split("\n").map((line) => line.split("=")[0]);
    assert.deepEqual(names.filter((name) => !["HOME", "USER", "LOGNAME", "SHELL"].includes(name)).sort(), ["LANG", "PATH"]);
    assert.doesNotMatch(output, /must-not-travel/);
  } finally {
    delete process.env.PANEL_TEST_SECRET;
  }
  assert.throws(() => startAsUser("bad name", "true", []), /not an account username/);
  assert.throws(() => startAsUser("-u", "true", []), /not an account username/);
});
