import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { LIST_OPTIONS, parseListedLine } from "@/lib/provisioning/home-restore";

// The listing of home.tar that a path restore reads (lib/provisioning/home-restore.ts): real GNU
// tar's output for names a customer may choose — quotes, backslashes, ` -> `, a newline, UTF-8
// and bytes that are not — parsed back to exactly the bytes of each name, with its kind, mode
// and size.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "home-archive-"));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test("each entry of tar's listing comes back with its name's exact bytes, its kind, permission bits and size", () => {
  const home = path.join(dir, "home");
  const names = [`we "ird" \\ name -> é.txt`, "new\nline", "tab\there", "trigraph??=", "-starts-with-dash", "%s%n"];
  fs.mkdirSync(path.join(home, "folder"), { recursive: true, mode: 0o750 });
  fs.chmodSync(path.join(home, "folder"), 0o750);
  for (const [index, name] of names.entries()) fs.writeFileSync(path.join(home, "folder", name), "x".repeat(index + 1), { mode: 0o640 });
  const latin1Name = Buffer.from([0x6c, 0x61, 0x74, 0x69, 0x6e, 0xe9]); // "latiné" in latin1: no UTF-8
  fs.writeFileSync(Buffer.concat([Buffer.from(path.join(home, "folder") + "/"), latin1Name]), "latin");
  fs.symlinkSync("/etc/passwd", path.join(home, "folder", "link -> elsewhere"));
  fs.chmodSync(path.join(home, "folder", names[0]), 0o4755);

  const archive = execFileSync("tar", ["--create", "--file=-", "--directory", home, "--format=gnu", "--sort=name", "."]);
  const listing = execFileSync("tar", [...LIST_OPTIONS, "-f", "-"], { input: archive, env: { ...process.env, LANG: "C.UTF-8" } });
  const entries = listing
    .toString("latin1")
    .split("\n")
    .filter(Boolean)
    .map((line) => parseListedLine(line));
  assert.ok(entries.every((entry) => entry !== null), listing.toString("latin1"));
  const byName = new Map(entries.map((entry) => [entry!.name, entry!]));
  const bytes = (name: string) => Buffer.from(name, "utf8").toString("latin1");

  assert.deepEqual(byName.get("./folder"), { kind: "folder", mode: 0o750, size: 0, name: "./folder" });
  for (const [index, name] of names.entries()) {
    const entry = byName.get(bytes(`./folder/${name}`));
    assert.ok(entry, `${JSON.stringify(name)} parsed back: ${[...byName.keys()].map((key) => JSON.stringify(key)).join(", ")}`);
    assert.equal(entry.kind, "file");
    assert.equal(entry.size, index + 1);
    assert.equal(entry.mode, index === 0 ? 0o755 : 0o640, "permission bits (setuid dropped)");
  }
  assert.equal(byName.get(`./folder/${latin1Name.toString("latin1")}`)?.size, 5, "a name that is not UTF-8, byte for byte");
  assert.equal(byName.get(bytes("./folder/link -> elsewhere"))?.kind, "other", "a link is neither file nor folder, its target not part of its name");
  assert.equal(byName.size, names.length + 4); // ., folder, the latin1 file, the link
});

test("lines that are not tar's listing are nobody's entry", () => {
  for (const line of ["", "tar: Removing leading `/' from member names", 'drwxr-x--- 0/0 0 2026-01-01 00:00 "unterminated', "-rw-r--r-- 0/0 12 2026-01-01 00:00 ./unquoted"]) {
    assert.equal(parseListedLine(line), null, line);
  }
});
