import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { createAccount } from "@/lib/accounts/service";
import { backUp } from "../support/backups";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedActor } from "../support/seed";

// Retention removes what it does not keep (BACKUP_KEEP_*): with one run kept a day, a week and a
// month, an account backed up three times today keeps its newest run only, in the list and in the
// repository (restic's own --group-by tags kept every run: each run's tags are unique).

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-retention-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const seed = async (db: Database) => ({
  adminKey: await makeKey(db, { scope: "admin" }),
  account: await createAccount(db, { username: `keep${process.pid % 10000}`, domain: "retention.example" }, seedActor),
});

for (const backend of machineBackends("postgres")) {
  describe(`backup retention (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const repository = path.join(root, `repository-${backend}`);
    const passwordFile = path.join(root, `password-${backend}`);
    before(async () => {
      env = await createEnvironment(backend, seed, {
        BACKUP_REPOSITORY: repository,
        BACKUP_PASSWORD_FILE: passwordFile,
        BACKUP_KEEP_DAILY: "1",
        BACKUP_KEEP_WEEKLY: "1",
        BACKUP_KEEP_MONTHLY: "1",
      });
    });
    after(async () => {
      await env?.teardown();
    });

    test("three runs today: the newest is kept, the others are gone from the list and the repository", async () => {
      const admin = apiClient(env.server.baseUrl, env.seed.adminKey);
      const id = env.seed.account.id;
      const runs: string[] = [];
      for (let i = 0; i < 3; i++) runs.push(await backUp(admin, id));
      // The last run's retention goes on after it is listed: wait for the list to settle.
      let listed: string[] = [];
      for (let waited = 0; waited < 60_000; waited += 250) {
        listed = (await admin.get(`/api/admin/accounts/${id}/backups`)).body.snapshots.map((run: { id: string }) => run.id);
        if (listed.length === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      assert.deepEqual(listed, [runs[2]]);
      const snapshots = JSON.parse(
        execFileSync("restic", ["snapshots", "--json", "--no-lock"], { env: { ...process.env, RESTIC_REPOSITORY: repository, RESTIC_PASSWORD_FILE: passwordFile } }).toString(),
      ) as { tags: string[] }[];
      const runTags = new Set(snapshots.map((snapshot) => snapshot.tags.find((tag) => tag.startsWith("run:"))));
      assert.deepEqual([...runTags], [`run:${runs[2]}`]);
    });
  });
}
