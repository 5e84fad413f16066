import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { waitFor } from "../support/wait";

// A test server goes with the process that started it (tests/support/exit-with-parent.mjs), even
// when that parent is SIGKILLed and runs no teardown. Here the parent starts a long-lived child
// the way startServer does (the guard imported, stdin a pipe), prints its pid and is killed.

const guard = path.join(import.meta.dirname, "../support/exit-with-parent.mjs");

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test("a child started with the guard exits when its parent is SIGKILLed", async () => {
  const parentScript = `
    const { spawn } = require("node:child_process");
    const child = spawn(process.execPath, ["--import", ${JSON.stringify(guard)}, "-e", "setInterval(() => {}, 1000)"], { stdio: ["pipe", "ignore", "ignore"] });
    console.log(child.pid);
    setInterval(() => {}, 1000);`;
  const parent = spawn(process.execPath, ["-e", parentScript], { stdio: ["ignore", "pipe", "inherit"] });
  const childPid = await new Promise<number>((resolve) => parent.stdout!.once("data", (chunk) => resolve(Number(String(chunk).trim()))));
  try {
    assert.ok(alive(childPid));
    parent.kill("SIGKILL");
    await waitFor("the child to exit after its parent", async () => !alive(childPid), 10_000);
  } finally {
    if (alive(childPid)) process.kill(childPid, "SIGKILL");
  }
});
