import assert from "node:assert/strict";
import { test } from "node:test";
import { eachLimited } from "@/lib/provisioning/system";

// lib/provisioning/nginx.ts restores the previous site files when a write fails: that must not
// race with writes still running, nor with ones started after the failure.
test("after a failure eachLimited starts nothing more and throws once the running tasks ended", async () => {
  const started: number[] = [];
  const finished: number[] = [];
  const run = eachLimited([0, 1, 2, 3, 4, 5], 2, async (item) => {
    started.push(item);
    if (item === 1) throw new Error("write failed");
    await new Promise((resolve) => setTimeout(resolve, 50));
    finished.push(item);
  });
  await assert.rejects(run, /write failed/);
  assert.deepEqual(started, [0, 1], "no item was started after the failure");
  assert.deepEqual(finished, [0], "the task under way had ended before the error was thrown");
});
