import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { DataDirLockedError, openConnection } from "@/db/client";
import { env } from "@/lib/env";
import { removeOrphanTemporaryFiles } from "@/lib/provisioning/zone-files";
import { createTestDatabase } from "../support/database";

// What a crash leaves behind must not stop or litter the next start: a PGlite lock file whose pid
// is not the panel process that wrote it, and temporary zone files.

test("a PGlite lock is held only by the live process that wrote it", async () => {
  const database = await createTestDatabase("pglite");
  const dataDir = (database.target as { dataDir: string }).dataDir;
  const lockPath = path.join(dataDir, "panel.lock");
  // A live process that is not a panel: pid 1 here, and a `sleep` of the test's own.
  const sleeper = spawn("sleep", ["60"]);
  try {
    for (const stale of ["1", `${sleeper.pid}\nnode server.ts\n`]) {
      fs.writeFileSync(lockPath, stale);
      const connection = await openConnection(database.target, "brief");
      assert.match(fs.readFileSync(lockPath, "utf8"), new RegExp(`^${process.pid}\\n`), "the lock was taken over");
      await connection.close();
      assert.equal(fs.existsSync(lockPath), false, "closing releases the lock");
    }
    const ownerCommandLine = fs.readFileSync(`/proc/${sleeper.pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    fs.writeFileSync(lockPath, `${sleeper.pid}\n${ownerCommandLine}\n`);
    await assert.rejects(openConnection(database.target, "brief"), DataDirLockedError, "a live owner keeps its lock");
  } finally {
    sleeper.kill();
    await database.drop();
  }
});

test("temporary zone files older than a minute are removed, zone files and fresh ones kept", async () => {
  const dir = env().zonesDir;
  fs.mkdirSync(dir, { recursive: true });
  const orphan = path.join(dir, ".leftover.example.zone.0123456789ab.tmp");
  const fresh = path.join(dir, ".leftover.example.zone.ba9876543210.tmp");
  const zone = path.join(dir, "leftover.example.zone");
  for (const file of [orphan, fresh, zone]) fs.writeFileSync(file, "");
  const anHourAgo = new Date(Date.now() - 3600_000);
  fs.utimesSync(orphan, anHourAgo, anHourAgo);
  fs.utimesSync(zone, anHourAgo, anHourAgo);
  try {
    await removeOrphanTemporaryFiles();
    assert.equal(fs.existsSync(orphan), false);
    assert.equal(fs.existsSync(fresh), true, "a write in progress is left alone");
    assert.equal(fs.existsSync(zone), true);
  } finally {
    for (const file of [orphan, fresh, zone]) fs.rmSync(file, { force: true });
  }
});
