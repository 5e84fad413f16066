import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

// The bundles of the command line and the server (scripts/bundles.mjs): made again when a source
// is newer than them, used as they are otherwise; the agent's part of the command line's loads
// none of the panel's packages.

const outDir = path.join("node_modules", ".cache", "panel-cli");
const currentFile = path.join(outDir, "current.json");
const serverCurrentFile = path.join("node_modules", ".cache", "panel-server", "current.json");

interface Current {
  entry: string;
  outputs: string[];
  inputs: string[];
  builtFrom: number;
}

/** Runs scripts/bundles.mjs; the command line's bundle's current.json. */
function bringUpToDate(): Current {
  const result = spawnSync(process.execPath, ["scripts/bundles.mjs"], { encoding: "utf8" });
  assert.equal(result.status, 0, result.stderr);
  return JSON.parse(fs.readFileSync(currentFile, "utf8"));
}

const serverBundle = (): Current => JSON.parse(fs.readFileSync(serverCurrentFile, "utf8"));

test("a source newer than a bundle makes a new one; otherwise the bundle is used as it is", () => {
  const first = bringUpToDate();
  const firstServer = serverBundle();
  assert.ok(first.inputs.includes("lib/cli/main.ts") && first.inputs.includes("lib/agent/cli.ts"), "the sources are recorded");
  assert.ok(firstServer.inputs.includes("server.ts") && firstServer.inputs.includes("lib/http/registry.ts"), "the server's sources are recorded");
  assert.equal(bringUpToDate().builtFrom, first.builtFrom, "nothing changed: not made again");
  assert.equal(serverBundle().builtFrom, firstServer.builtFrom, "nothing changed: the server's not made again");

  // tsconfig.json is a source of the bundle and not of `next build` (scripts/build-if-needed.ts):
  // touching it costs no other test a build.
  const { atime, mtime } = fs.statSync("tsconfig.json");
  try {
    const now = new Date();
    fs.utimesSync("tsconfig.json", now, now);
    const second = bringUpToDate();
    assert.ok(second.builtFrom > first.builtFrom, "made again");
    assert.ok(serverBundle().builtFrom > firstServer.builtFrom, "the server's made again");
    for (const name of second.outputs) assert.ok(fs.existsSync(path.join(outDir, name)), `${name} is there`);
  } finally {
    fs.utimesSync("tsconfig.json", atime, mtime);
  }
});

/** The packages `chunk` and the chunks it imports statically import, loaded with it. */
function packagesLoadedWith(chunk: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const code = fs.readFileSync(path.join(outDir, name), "utf8");
    for (const [, specifier] of code.matchAll(/^import\s+(?:[^;]*?\s+from\s+)?"([^"]+)";/gm)) {
      if (specifier.startsWith("./")) visit(specifier.slice(2));
      else packages.add(specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/"));
    }
  };
  visit(chunk);
  return packages;
}

test("`node agent`'s part of the bundle imports no database client, ORM or web framework", () => {
  const { outputs } = bringUpToDate();
  const agentChunk = outputs.find((name) => /^cli-.*\.mjs$/.test(name));
  assert.ok(agentChunk, "lib/agent/cli.ts is a chunk of its own");
  const packages = packagesLoadedWith(agentChunk);
  assert.ok(packages.has("@nats-io/transport-node"), `it reads its imports: ${[...packages]}`);
  for (const forbidden of ["postgres", "drizzle-orm", "@electric-sql/pglite", "next", "react", "next-auth"]) {
    assert.ok(!packages.has(forbidden), `the agent's chunks import ${forbidden}`);
  }
});

test("the panel's commands load acme-client and mysql2 only when one uses them, and qrcode never", () => {
  const { outputs } = bringUpToDate();
  const panelChunk = outputs.find((name) => /^panel-.*\.mjs$/.test(name));
  assert.ok(panelChunk, "lib/cli/panel.ts is a chunk of its own");
  const packages = packagesLoadedWith(panelChunk);
  assert.ok(packages.has("@electric-sql/pglite"), `it reads its imports: ${[...packages]}`);
  const code = outputs.filter((name) => name.endsWith(".mjs")).map((name) => fs.readFileSync(path.join(outDir, name), "utf8")).join("\n");
  for (const lazy of ["acme-client", "mysql2", "qrcode"]) assert.ok(!packages.has(lazy), `${lazy} is loaded with every command`);
  // Commands do order certificates and make databases; no command draws a QR code.
  assert.match(code, /import\("acme-client"\)/, "acme-client is imported where it is used");
  assert.match(code, /import\("mysql2\/promise"\)/, "mysql2 is imported where it is used");
});
