import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import mysql from "mysql2/promise";
import type { Database } from "@/db/client";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey } from "../support/seed";
import { makeChrootableRoot } from "../support/ssh-server";
import { removeLinuxUsers, startWebServers, systemUsersHostingEnv, type WebServers } from "../support/web-servers";

// Backups by the real restic into a repository of this file's own: an account with files and a
// database of 1,000 rows backed up through the API; a file and 500 rows lost and brought back;
// paths that try to leave the home refused; a repository that fails recorded as a failure
// with its error while the older restore points stay; another account's restore points out of
// reach.

const MYSQL_URL = process.env.TEST_MYSQL_URL ?? "mysql://root@127.0.0.1:3306";
const root = makeChrootableRoot("backups");
const createdUsers: string[] = [];
let servers: WebServers;
let panelEnv: Record<string, string>;

before(async () => {
  servers = await startWebServers(root);
  panelEnv = {
    ...systemUsersHostingEnv(servers, root),
    MYSQL_PROVISION_URL: MYSQL_URL,
  };
});

after(async () => {
  await servers?.stop();
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

const sha256 = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");
const seed = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });

for (const backend of testBackends()) {
  describe(`backups by restic (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const suffix = randomBytes(3).toString("hex");
    const alice = { username: `ba${suffix}`, id: 0, key: { key: "", secret: "" } };
    const bob = { username: `bb${suffix}`, id: 0 };
    const home = (username: string) => path.join(root, "home", username);
    let connection: mysql.Connection;
    let run = "";
    const passwordFile = path.join(root, `backup-password-${backend}`);
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const as = (account: { id: number }) => apiClient(env.server.baseUrl, env.seed.adminKey, account.id);
    const rows = async () => ((await connection.query(`SELECT COUNT(*) AS n FROM \`${alice.username}_shop\`.orders`)) as [{ n: number }[], unknown])[0][0].n;

    /** The account's status line, once its backup has ended (POST answers 202 and goes on). */
    async function backupOutcome(account: { id: number }, since: number) {
      for (let waited = 0; waited < 60_000; waited += 250) {
        const status = (await admin().get("/api/admin/backups")).body.accounts.find((a: { account_id: number }) => a.account_id === account.id);
        const ended = [status.last_success_at, status.last_failure_at].filter(Boolean).some((at: string) => Date.parse(at) >= since);
        if (ended) return status;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      throw new Error("the backup did not end within 60 s");
    }

    before(async () => {
      createdUsers.push(alice.username, bob.username);
      // A repository per backend: each backend's fresh database numbers its accounts from 1 again.
      env = await createEnvironment(backend, seed, { ...panelEnv, BACKUP_REPOSITORY: path.join(root, `repository-${backend}`), BACKUP_PASSWORD_FILE: passwordFile });
      connection = await mysql.createConnection({ uri: MYSQL_URL });
      for (const account of [alice, bob]) {
        const created = await admin().post("/api/admin/accounts", { username: account.username, domain: `${account.username}.example` });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        account.id = created.body.id;
      }
    });
    after(async () => {
      for (const account of [alice, bob]) await admin().delete(`/api/admin/accounts/${account.id}`).catch(() => undefined);
      await connection?.end();
      await env?.teardown();
    });

    test("a backup now (202) of files and a 1,000-row database: a restore point listed with its database; the status shows the success", async () => {
      const database = await as(alice).post("/api/client/databases", { database_name: "shop" });
      assert.equal(database.status, 201, JSON.stringify(database.body));
      await connection.query(`CREATE TABLE \`${alice.username}_shop\`.orders (id INT PRIMARY KEY, item VARCHAR(40))`);
      const values = Array.from({ length: 1000 }, (_, i) => `(${i + 1}, 'item ${i + 1}')`).join(",");
      await connection.query(`INSERT INTO \`${alice.username}_shop\`.orders VALUES ${values}`);
      fs.mkdirSync(path.join(home(alice.username), "public_html", "images"), { recursive: true });
      fs.writeFileSync(path.join(home(alice.username), "public_html", "index.html"), "alice's site\n");
      fs.writeFileSync(path.join(home(alice.username), "public_html", "images", "logo.bin"), randomBytes(200_000));
      const owner = Number(execFileSync("id", ["-u", alice.username], { encoding: "utf8" }));
      for (const file of ["index.html", "images", "images/logo.bin"]) fs.chownSync(path.join(home(alice.username), "public_html", file), owner, owner);

      const since = Date.now() - 1000;
      const started = await admin().post(`/api/admin/accounts/${alice.id}/backups`);
      assert.equal(started.status, 202, JSON.stringify(started.body));
      const status = await backupOutcome(alice, since);
      assert.equal(status.last_error, null, JSON.stringify(status));
      assert.equal(status.snapshots, 1);
      const runs = await admin().get(`/api/admin/accounts/${alice.id}/backups`);
      assert.equal(runs.status, 200);
      assert.equal(runs.body.snapshots.length, 1);
      assert.deepEqual(runs.body.snapshots[0].databases, [`${alice.username}_shop`]);
      run = runs.body.snapshots[0].id;
      assert.deepEqual((await as(alice).get("/api/client/backups")).body, runs.body, "the client sees its own");
      assert.doesNotMatch(fs.readFileSync(passwordFile, "utf8"), /^\s*$/);
      assert.equal(fs.statSync(passwordFile).mode & 0o777, 0o600);
    });

    test("a lost file and 500 lost rows come back: identical checksum, 1,000 rows", async () => {
      const logo = path.join(home(alice.username), "public_html", "images", "logo.bin");
      const before = sha256(logo);
      fs.rmSync(logo);
      await connection.query(`DELETE FROM \`${alice.username}_shop\`.orders WHERE id > 500`);
      assert.equal(await rows(), 500);
      const file = await as(alice).post(`/api/client/backups/${run}/restore`, { path: "public_html/images/logo.bin" });
      assert.equal(file.status, 200, JSON.stringify(file.body));
      assert.equal(sha256(logo), before);
      assert.equal(fs.statSync(logo).uid, Number(execFileSync("id", ["-u", alice.username], { encoding: "utf8" })), "the customer's again");
      const database = await admin().post(`/api/admin/accounts/${alice.id}/restore`, { snapshot: run, database: `${alice.username}_shop` });
      assert.equal(database.status, 200, JSON.stringify(database.body));
      assert.equal(await rows(), 1000);
    });

    test("the whole of public_html and every database from a restore point (neither field)", async () => {
      fs.rmSync(path.join(home(alice.username), "public_html", "images"), { recursive: true });
      fs.writeFileSync(path.join(home(alice.username), "public_html", "index.html"), "defaced\n");
      await connection.query(`DROP TABLE \`${alice.username}_shop\`.orders`);
      const restored = await admin().post(`/api/admin/accounts/${alice.id}/restore`, { snapshot: run });
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      assert.equal(fs.readFileSync(path.join(home(alice.username), "public_html", "index.html"), "utf8"), "alice's site\n");
      assert.ok(fs.existsSync(path.join(home(alice.username), "public_html", "images", "logo.bin")));
      assert.equal(await rows(), 1000);
    });

    test("restore paths that leave the home are refused and write nothing: .., absolute, a link planted by the customer to /etc", async () => {
      const decoy = path.join(root, "decoy");
      fs.mkdirSync(decoy, { recursive: true });
      execFileSync("runuser", ["-u", alice.username, "--", "ln", "-s", decoy, path.join(home(alice.username), "public_html", "images", "out")]);
      for (const bad of ["../etc/passwd", "/etc/passwd", "public_html/../../x", "public_html/images/out/logo.bin", ""]) {
        const refused = await as(alice).post(`/api/client/backups/${run}/restore`, { path: bad });
        assert.ok([400, 422].includes(refused.status), `${bad}: ${refused.status} ${JSON.stringify(refused.body)}`);
      }
      assert.deepEqual(fs.readdirSync(decoy), [], "nothing written at the link's target");
    });

    test("another account cannot list or restore this account's restore points", async () => {
      assert.deepEqual((await as(bob).get("/api/client/backups")).body, { snapshots: [] });
      const refused = await as(bob).post(`/api/client/backups/${run}/restore`, { path: "public_html/index.html" });
      assert.equal(refused.status, 422);
      assert.ok(refused.body.errors?.snapshot, JSON.stringify(refused.body));
      const database = await as(bob).post(`/api/client/backups/${run}/restore`, { database: `${alice.username}_shop` });
      assert.equal(database.status, 422);
    });

    test("a repository that fails (wrong password): the run is recorded as failed with its error, the older restore point stays", async () => {
      const password = fs.readFileSync(passwordFile, "utf8");
      fs.writeFileSync(passwordFile, "not the password\n");
      try {
        const since = Date.now() - 1000;
        assert.equal((await admin().post(`/api/admin/accounts/${alice.id}/backups`)).status, 202);
        const status = await backupOutcome(alice, since);
        assert.match(status.last_error ?? "", /restic .*failed/i);
        assert.ok(Date.parse(status.last_failure_at) >= since);
      } finally {
        fs.writeFileSync(passwordFile, password);
      }
      const runs = await admin().get(`/api/admin/accounts/${alice.id}/backups`);
      assert.deepEqual(runs.body.snapshots.map((snapshot: { id: string }) => snapshot.id), [run], "the older restore point stays");
    });

    test("terminated, then a new account with the same username: it sees none of the old account's restore points", async () => {
      assert.equal((await admin().delete(`/api/admin/accounts/${alice.id}`)).status, 200);
      const again = await admin().post("/api/admin/accounts", { username: alice.username, domain: `${alice.username}.example` });
      assert.equal(again.status, 201, JSON.stringify(again.body));
      const newcomer = { id: again.body.id as number };
      assert.deepEqual((await as(newcomer).get("/api/client/backups")).body, { snapshots: [] });
      assert.deepEqual((await admin().get(`/api/admin/accounts/${newcomer.id}/backups`)).body, { snapshots: [] });
      const refused = await as(newcomer).post(`/api/client/backups/${run}/restore`, { path: "public_html/index.html" });
      assert.equal(refused.status, 422);
      assert.ok(refused.body.errors?.snapshot);
      assert.equal((await admin().delete(`/api/admin/accounts/${newcomer.id}`)).status, 200);
    });
  });
}
