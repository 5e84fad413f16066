import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { readFilesIfExist, writeFilesAtomically } from "@/lib/provisioning/system";

// Start-up writes thousands of files in one batch (writeFilesAtomically: one flush to disk for
// all of them instead of an fsync each) and reads the previous ones only where they exist.

const temporaryFiles = (dir: string) => fs.readdirSync(dir).filter((name) => name.endsWith(".tmp"));

test("a batch, small (an fsync each) or large (one flush), writes every file whole with its mode (0600 by default) and leaves no temporary file", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-batch-"));
  try {
    for (const count of [3, 200]) {
      const files = Array.from({ length: count }, (_, index) => ({ path: path.join(dir, "sub", `f${index}.conf`), contents: `file ${index} of ${count}\n` }));
      fs.mkdirSync(path.join(dir, "sub"), { recursive: true });
      fs.writeFileSync(files[0].path, "the old contents\n");
      await writeFilesAtomically(files);
      for (const file of files) assert.equal(fs.readFileSync(file.path, "utf8"), file.contents);
      assert.deepEqual(temporaryFiles(path.join(dir, "sub")), []);
    }
    assert.equal(fs.statSync(path.join(dir, "sub", "f1.conf")).mode & 0o777, 0o600, "the panel's alone unless a mode is given");
    // The mode given is the file's, whatever the process's umask (the panel's is 0077).
    const umask = process.umask(0o077);
    try {
      const shared = path.join(dir, "keys");
      await writeFilesAtomically([{ path: shared, contents: "key\n", mode: 0o640 }]);
      assert.equal(fs.statSync(shared).mode & 0o777, 0o640);
    } finally {
      process.umask(umask);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a batch that fails throws and leaves no temporary file; every other file holds its old or its new contents", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-batch-"));
  try {
    // A directory where a file should go: its rename fails.
    fs.mkdirSync(path.join(dir, "in-the-way.conf"));
    const files = Array.from({ length: 100 }, (_, index) => ({ path: path.join(dir, `f${index}.conf`), contents: "new\n" }));
    files[50] = { path: path.join(dir, "in-the-way.conf"), contents: "new\n" };
    for (const file of files.slice(51)) fs.writeFileSync(file.path, "old\n");
    await assert.rejects(writeFilesAtomically(files));
    assert.deepEqual(temporaryFiles(dir), []);
    for (const file of files.slice(51)) assert.match(fs.readFileSync(file.path, "utf8"), /^(old|new)\n$/, "old or new, never half");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("readFilesIfExist: each file's text, null for a file or directory that is not there", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-batch-"));
  try {
    fs.writeFileSync(path.join(dir, "a.conf"), "a\n");
    const contents = await readFilesIfExist([path.join(dir, "a.conf"), path.join(dir, "b.conf"), path.join(dir, "missing", "c.conf")]);
    assert.deepEqual(Object.fromEntries(contents), {
      [path.join(dir, "a.conf")]: "a\n",
      [path.join(dir, "b.conf")]: null,
      [path.join(dir, "missing", "c.conf")]: null,
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
