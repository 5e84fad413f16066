import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { createPlan } from "@/lib/plans/service";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedActor } from "../support/seed";
import { removeLinuxUsers } from "../support/web-servers";

// Disk quotas where HOME_ROOT's file system has user quotas on. This machine's kernel is built
// without CONFIG_QUOTA (no file system here can have them: ext4 refuses to mount with usrquota),
// so the three quota tools the panel runs are replaced on the server's PATH by scripts: findmnt
// and quotaon answer as on a server with quotas on, setquota records its arguments. What is
// proven: when and with which limit the panel calls setquota (account created with a Linux
// user, plan changed), and that usage-details says the limit is enforced. The kernel's part —
// refusing the write — is Debian's quota tools' and the kernel's, not tested here.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-quota-"));
fs.chmodSync(root, 0o755);
const tools = path.join(root, "bin");
const calls = path.join(root, "setquota.calls");
const createdUsers: string[] = [];

before(() => {
  fs.mkdirSync(tools);
  const script = (name: string, body: string) => fs.writeFileSync(path.join(tools, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  script("findmnt", 'echo /quota-home');
  script("quotaon", 'echo "user quota on $3 (/dev/fake) is on"');
  script("setquota", `echo "$@" >> ${calls}`);
});

after(() => {
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

const seed = async (db: Database) => {
  await createPlan(db, { name: "small", disk_mb: 50 }, seedActor);
  await createPlan(db, { name: "large", disk_mb: 200 }, seedActor);
  return { adminKey: await makeKey(db, { scope: "admin" }) };
};

const setquotaCalls = () => (fs.existsSync(calls) ? fs.readFileSync(calls, "utf8").trim().split("\n") : []);

for (const backend of machineBackends("pglite")) {
  describe(`disk quotas where the file system has them (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const username = `dq${randomBytes(3).toString("hex")}`;
    let accountId = 0;
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);

    before(async () => {
      createdUsers.push(username);
      fs.rmSync(calls, { force: true });
      env = await createEnvironment(backend, seed, {
        SYSTEM_USERS: "1",
        HOME_ROOT: path.join(root, `home-${backend}`),
        PATH: `${tools}:${process.env.PATH}`,
      });
    });
    after(async () => {
      await admin().delete(`/api/admin/accounts/${accountId}`).catch(() => undefined);
      await env?.teardown();
    });

    test("an account's Linux user gets its plan's disk_mb as its block limit, again when the plan changes; usage-details says enforced", async () => {
      const created = await admin().post("/api/admin/accounts", { username, domain: `${username}.example`, plan: "small" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      accountId = created.body.id;
      assert.deepEqual(setquotaCalls(), [`-u -- ${username} 51200 51200 0 0 /quota-home`], "50 MB in 1 KiB blocks, soft and hard");
      const usage = await apiClient(env.server.baseUrl, env.seed.adminKey, accountId).get("/api/client/account/usage-details");
      assert.equal(usage.status, 200, JSON.stringify(usage.body));
      assert.deepEqual({ limit: usage.body.disk.limit_mb, enforced: usage.body.disk.enforced }, { limit: 50, enforced: true });

      const moved = await admin().put(`/api/admin/accounts/${accountId}`, { plan: "large" });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      assert.equal(setquotaCalls().at(-1), `-u -- ${username} 204800 204800 0 0 /quota-home`);
    });
  });
}
