import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { asUser, backupPanelEnv, backUp } from "../support/backups";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey } from "../support/seed";
import { startServer, type TestServer } from "../support/server";
import { makeChrootableRoot } from "../support/ssh-server";
import { removeLinuxUsers } from "../support/web-servers";

// Attack: a customer filling the server's disk with restores (issue 29, "restores have no
// per-account lock … parallel restores fill the disk; the handler goes on after the request's
// time-out"). Parallel restores of one account: one runs, the others answer 409 — on one
// panel instance and across two sharing PostgreSQL. A restore larger than the home file
// system's free space is refused before it writes anything (422 on `path`). A restore whose
// client goes away stops: its processes end and the account can restore again at once.
//
// HOME_ROOT is a 160 MB tmpfs of the test's own, so "free space" is known and small.

const root = makeChrootableRoot("restore-limits");
const createdUsers: string[] = [];

before(() => {
  fs.mkdirSync(path.join(root, "home"), { mode: 0o755 });
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=160m,mode=0755", "tmpfs", path.join(root, "home")]);
});

after(() => {
  removeLinuxUsers(createdUsers);
  try {
    execFileSync("umount", [path.join(root, "home")], { stdio: "ignore" });
  } catch {
    // not mounted
  }
  fs.rmSync(root, { recursive: true, force: true });
});

const seed = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });

for (const backend of testBackends()) {
  describe(`restores of one account: one at a time, within the disk (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const alice = { username: `la${randomBytes(3).toString("hex")}`, id: 0 };
    const home = () => path.join(root, "home", alice.username);
    let run = "";
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const client = (server: { baseUrl: string } = env.server) => apiClient(server.baseUrl, env.seed.adminKey, alice.id);

    before(async () => {
      createdUsers.push(alice.username);
      env = await createEnvironment(backend, seed, backupPanelEnv(root, backend));
      const created = await admin().post("/api/admin/accounts", { username: alice.username, domain: `${alice.username}.example` });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      alice.id = created.body.id;
      // 40 MB in 40 files: a restore of it takes long enough to be overlapped.
      asUser(alice.username, "sh", ["-c", "mkdir -p public_html/big && for i in $(seq 1 40); do head -c 1048576 /dev/urandom > public_html/big/f$i; done"], { cwd: home() });
      run = await backUp(admin(), alice.id);
    });
    after(async () => {
      await admin().delete(`/api/admin/accounts/${alice.id}`).catch(() => undefined);
      await env?.teardown();
    });

    test("parallel restores of one account: one restores, the others answer 409", async () => {
      const answers = await Promise.all([1, 2, 3].map(() => client().post(`/api/client/backups/${run}/restore`, { path: "public_html/big" })));
      const statuses = answers.map((answer) => answer.status).sort();
      assert.deepEqual(statuses, [200, 409, 409], JSON.stringify(answers.map((answer) => answer.body)));
      const refused = answers.find((answer) => answer.status === 409)!;
      assert.match(refused.body.error, /restore .* already running/i);
      const again = await client().post(`/api/client/backups/${run}/restore`, { path: "public_html/big" });
      assert.equal(again.status, 200, `once it has ended the next one runs: ${JSON.stringify(again.body)}`);
    });

    test("a restore larger than the home file system's free space is refused before it writes (422 on path), and runs once there is room", async () => {
      asUser(alice.username, "rm", ["-rf", "public_html/big"], { cwd: home() });
      const filler = path.join(root, "home", ".filler");
      const { bavail, bsize } = fs.statfsSync(path.join(root, "home"));
      // Leave 10 MB: less than the folder's 40.
      execFileSync("fallocate", ["-l", String(bavail * bsize - 10 * 1048576), filler]);
      try {
        const refused = await client().post(`/api/client/backups/${run}/restore`, { path: "public_html/big" });
        assert.equal(refused.status, 422, JSON.stringify(refused.body));
        assert.match(refused.body.errors?.path?.[0] ?? "", /free/i, JSON.stringify(refused.body));
        assert.equal(fs.existsSync(path.join(home(), "public_html", "big")), false, "nothing written");
      } finally {
        fs.rmSync(filler);
      }
      const restored = await client().post(`/api/client/backups/${run}/restore`, { path: "public_html/big" });
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      assert.equal(fs.readdirSync(path.join(home(), "public_html", "big")).length, 40);
    });

    test("a restore whose client goes away stops: none of its processes go on, and the account restores again at once", async () => {
      const uid = Number(execFileSync("id", ["-u", alice.username], { encoding: "utf8" }));
      const gone = new AbortController();
      const request = fetch(`${env.server.baseUrl}/api/client/backups/${run}/restore`, {
        method: "POST",
        headers: { "x-api-key": env.seed.adminKey.key, "x-api-secret": env.seed.adminKey.secret, "x-hosting-account": String(alice.id), "content-type": "application/json" },
        body: JSON.stringify({ path: "public_html/big", to: "public_html/big-copy" }),
        signal: gone.signal,
      }).catch(() => null);
      // Under way: the account's process writing the copy has started.
      for (let waited = 0; !processesOf(uid).length; waited += 20) {
        assert.ok(waited < 10_000, "the restore's process as the account never started");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      gone.abort();
      await request;
      for (let waited = 0; processesOf(uid).length; waited += 100) {
        assert.ok(waited < 5_000, `the restore went on after its client left: ${processesOf(uid).join(", ")}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.equal(fs.existsSync(path.join(home(), "public_html", "big-copy")), false, "stopped midway, and what it had begun beside its place removed");
      let next = await client().post(`/api/client/backups/${run}/restore`, { path: "public_html/big", to: "public_html/big-copy-2" });
      for (let waited = 0; next.status === 409 && waited < 5_000; waited += 250) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        next = await client().post(`/api/client/backups/${run}/restore`, { path: "public_html/big", to: "public_html/big-copy-2" });
      }
      assert.equal(next.status, 200, JSON.stringify(next.body));
      asUser(alice.username, "rm", ["-rf", "public_html/big-copy", "public_html/big-copy-2"], { cwd: home() });
    });

    if (backend === "postgres") {
      test("two panel instances sharing PostgreSQL: parallel restores of one account through each, one restores, the other answers 409", async () => {
        let second: TestServer | null = null;
        try {
          second = await startServer({ ...env.database.env, ...backupPanelEnv(root, backend), DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "panel-data-")) });
          const answers = await Promise.all([env.server, second].map((server) => client(server).post(`/api/client/backups/${run}/restore`, { path: "public_html/big" })));
          assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 409], JSON.stringify(answers.map((answer) => answer.body)));
        } finally {
          await second?.stop();
        }
      });
    }
  });
}

/** The processes running as `uid` (from /proc): the restore's, while it runs. */
function processesOf(uid: number): string[] {
  return fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
      const real = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
      return real === uid ? [`${pid} ${/^Name:\s+(.*)$/m.exec(status)?.[1]}`] : [];
    } catch {
      return []; // ended meanwhile
    }
  });
}
