import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { forgetMoveRepository } from "@/lib/provisioning/move-runs";

// The move store (MOVE_REPOSITORY) is written by every node; a node whose root was taken races
// the removal of a move's repository (move.forget, run as root), swapping the repository's folders
// for links to a folder outside the store as fast as it can. The removal must unlink the links,
// never follow them: every file outside stays (the removal itself may fail while the node keeps
// writing, and is tried again, as move.forget is). Seen failing on the code before this change (a
// recursive fs.rm): files outside the store were deleted in each run.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-move-store-"));
const store = path.join(root, "store");
const outside = path.join(root, "outside");
const FOLDERS = 300;
const FILES = 20;

before(() => {
  Object.assign(process.env, { DATA_DIR: path.join(root, "data"), HOME_ROOT: path.join(root, "home") });
  delete (globalThis as { __panelEnv?: unknown }).__panelEnv;
  fs.mkdirSync(path.join(root, "data"), { mode: 0o700 });
  fs.mkdirSync(outside);
  for (let file = 0; file < FILES; file++) fs.writeFileSync(path.join(outside, `f${file}`), "precious");
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** The move's repository as a node wrote it: many folders of many files. */
function writeRepository(repository: string) {
  for (let folder = 0; folder < FOLDERS; folder++) {
    const dir = path.join(repository, "data", `d${folder}`);
    fs.mkdirSync(dir, { recursive: true });
    for (let file = 0; file < FILES; file++) fs.writeFileSync(path.join(dir, `f${file}`), "x");
  }
}

/** The hostile node: in a loop, each folder moved away and a link to `outside` put in its place. */
function startSwapping(repository: string) {
  const script = `
    cd ${JSON.stringify(path.join(repository, "data"))} || exit 0
    while true; do
      for d in d*; do mv -T -- "$d" "x$d" 2>/dev/null && ln -sfn ${JSON.stringify(outside)} "$d" 2>/dev/null; done
      [ -d . ] || exit 0
    done`;
  return spawn("sh", ["-c", script], { stdio: "ignore" });
}

test("a node swapping the move repository's folders for links during its removal deletes nothing outside it", async () => {
  for (let round = 0; round < 3; round++) {
    const repository = path.join(store, `move-${round}`);
    writeRepository(repository);
    const swapper = startSwapping(repository);
    // While the node keeps writing, the removal may fail ("directory not empty"): it is tried again.
    await forgetMoveRepository({ move: { repository, password: "unused" } }).catch(() => null);
    swapper.kill("SIGKILL");
    await new Promise((resolve) => swapper.once("exit", resolve));
    assert.deepEqual(fs.readdirSync(outside).sort(), Array.from({ length: FILES }, (_, file) => `f${file}`).sort(), `round ${round}: files outside the store were deleted`);
    // What is left of the repository (what the node wrote meanwhile) goes on the next try.
    await forgetMoveRepository({ move: { repository, password: "unused" } });
    assert.equal(fs.existsSync(repository), false);
  }
});
