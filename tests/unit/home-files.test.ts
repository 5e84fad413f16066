import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import {
  LinkInHomeError,
  makeDirectoryIn,
  openDirectoryPath,
  openFileIn,
  openTrustedDirectory,
  removeTreeIn,
} from "@/lib/provisioning/home-files";

// The primitives of lib/provisioning/home-files.ts, including the race a path-based check loses:
// a directory swapped for a link after it was opened (done here deterministically, between two
// calls) must not redirect the next step.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "home-files-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const me = { uid: process.getuid!(), gid: process.getgid!(), mode: 0o750 };

function fixture(name: string) {
  const home = path.join(root, name, "home");
  const decoy = path.join(root, name, "decoy");
  fs.mkdirSync(path.join(home, "public_html"), { recursive: true });
  fs.mkdirSync(decoy, { recursive: true });
  fs.writeFileSync(path.join(decoy, "file"), "decoy\n");
  return { home, decoy, list: () => fs.readdirSync(decoy).sort() };
}

test("a link on the way of a document root → LinkInHomeError naming the path; nothing made at the target", async () => {
  const { home, decoy, list } = fixture("walk");
  fs.symlinkSync(decoy, path.join(home, "public_html", "x"));
  const dir = (await openTrustedDirectory(home))!;
  try {
    await assert.rejects(openDirectoryPath(dir, "public_html/x/y", me), (error: unknown) => {
      assert.ok(error instanceof LinkInHomeError);
      assert.equal(error.relativePath, "public_html/x");
      assert.equal(error.reason, "a symbolic link");
      assert.deepEqual(error.forField("domain_path").fieldErrors?.domain_path?.length, 1);
      return true;
    });
  } finally {
    await dir.close();
  }
  assert.deepEqual(list(), ["file"]);
});

test("a directory swapped for a link after it was opened: the next step still acts inside the opened one", async () => {
  const { home, decoy, list } = fixture("swap");
  const dir = (await openTrustedDirectory(home))!;
  const publicHtml = (await openDirectoryPath(dir, "public_html"))!;
  // The customer's swap, between the panel's open and its mkdir.
  fs.renameSync(path.join(home, "public_html"), path.join(home, "moved"));
  fs.symlinkSync(decoy, path.join(home, "public_html"));
  await (await makeDirectoryIn(publicHtml, "site", { ...me, mode: 0o711 })).close();
  await Promise.all([publicHtml.close(), dir.close()]);
  assert.deepEqual(list(), ["file"], "nothing made in the link's target");
  assert.equal(fs.statSync(path.join(home, "moved", "site")).mode & 0o777, 0o711, "made in the directory that was opened");
  assert.equal(fs.statSync(decoy).mode & 0o777, 0o755);
  // The same step by path (the old way) lands in the decoy: the swap above is a real trap.
  fs.mkdirSync(path.join(home, "public_html", "by-path"));
  assert.deepEqual(list(), ["by-path", "file"]);
});

test("openFileIn refuses a link and a FIFO, opens a regular file", async () => {
  const { home, decoy } = fixture("files");
  fs.symlinkSync(path.join(decoy, "file"), path.join(home, "link.log"));
  fs.writeFileSync(path.join(home, "real.log"), "real\n");
  execFileSync("mkfifo", [path.join(home, "fifo.log")]);
  const dir = (await openTrustedDirectory(home))!;
  try {
    await assert.rejects(openFileIn(dir, "link.log"), (error: unknown) => error instanceof LinkInHomeError && error.reason === "a symbolic link");
    // Opened without blocking (no writer), then refused.
    await assert.rejects(openFileIn(dir, "fifo.log"), (error: unknown) => error instanceof LinkInHomeError && error.reason === "not a regular file");
    const file = (await openFileIn(dir, "real.log"))!;
    assert.equal(await file.readFile("utf8"), "real\n");
    await file.close();
    assert.equal(await openFileIn(dir, "missing.log"), null);
  } finally {
    await dir.close();
  }
});

test("removeTreeIn removes a home full of links and nothing they point at", async () => {
  const { home, decoy, list } = fixture("remove");
  fs.symlinkSync(decoy, path.join(home, "public_html", "to-decoy"));
  fs.symlinkSync(path.join(decoy, "file"), path.join(home, "file-link"));
  fs.mkdirSync(path.join(home, "a", "b"), { recursive: true });
  fs.symlinkSync("/", path.join(home, "a", "b", "root"));
  const parent = (await openTrustedDirectory(path.dirname(home)))!;
  try {
    await removeTreeIn(parent, "home");
    await removeTreeIn(parent, "home"); // missing: nothing
  } finally {
    await parent.close();
  }
  assert.equal(fs.existsSync(home), false);
  assert.deepEqual(list(), ["file"]);
  assert.equal(fs.readFileSync(path.join(decoy, "file"), "utf8"), "decoy\n");
});
