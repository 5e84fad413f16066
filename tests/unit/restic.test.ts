import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { AppError } from "@/lib/errors";
import { snapshotsWith } from "@/lib/provisioning/backup-runs";
import { ensureRepository, restic, snapshotsTagged } from "@/lib/provisioning/restic";

// The repository failures a backup must report in words, never as "no backups": an unreachable
// REST server, a disk that fills up halfway (a real 3 MB tmpfs), and a repository not made yet
// (which is made, not reported). Real restic, no panel server.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-restic-"));
const full = path.join(root, "full");
after(() => {
  try {
    execFileSync("umount", [full], { stdio: "ignore" });
  } catch {
    // not mounted
  }
  fs.rmSync(root, { recursive: true, force: true });
});

/** The repository the next calls use (env() is read once per process: dropped to read it again). */
function useRepository(repository: string) {
  Object.assign(process.env, { DATA_DIR: root, BACKUP_REPOSITORY: repository, BACKUP_PASSWORD_FILE: path.join(root, "password") });
  delete (globalThis as { __panelEnv?: unknown }).__panelEnv;
}

/** A port nothing listens on: taken, then freed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("an unreachable rest: repository is an error naming the refused connection, neither made nor listed as empty", async () => {
  useRepository(`rest:http://127.0.0.1:${await closedPort()}/`);
  await assert.rejects(ensureRepository(), (error: Error) => error instanceof AppError && /restic \w+ failed: .*connection refused/i.test(error.message));
  await assert.rejects(snapshotsWith({ tags: ["account-id:1"] }), /connection refused/i, "not an empty list of restore points");
});

test("a repository that does not exist yet lists no restore points and is made by the first backup", async () => {
  const repository = path.join(root, "fresh");
  useRepository(repository);
  assert.deepEqual(await snapshotsWith({ tags: ["account-id:1"] }), []);
  await ensureRepository();
  assert.ok(fs.existsSync(path.join(repository, "config")));
});

test("a disk that fills up: the backup fails with restic's 'no space left on device', the older snapshot stays", async () => {
  fs.mkdirSync(full);
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", full]);
  useRepository(path.join(full, "repository"));
  await ensureRepository();
  const small = path.join(root, "small");
  fs.mkdirSync(small);
  fs.writeFileSync(path.join(small, "note.txt"), "kept\n");
  await restic(["backup", "--tag", "part:small", small]);
  const big = path.join(root, "big");
  fs.mkdirSync(big);
  fs.writeFileSync(path.join(big, "noise.bin"), randomBytes(8_000_000));
  await assert.rejects(restic(["backup", "--tag", "part:big", big]), (error: Error) => error instanceof AppError && /no space left on device/.test(error.message));
  assert.equal((await snapshotsTagged("part:small")).length, 1, "the older snapshot is still there");
  assert.equal((await snapshotsTagged("part:big")).length, 0);
});
