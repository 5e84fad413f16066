import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import mysql from "mysql2/promise";
import type { Database } from "@/db/client";
import { addPhpVersion } from "@/lib/php/service";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedActor } from "../support/seed";
import { removeLinuxUsers, startWebServers, systemUsersHostingEnv, type WebServers } from "../support/web-servers";

// The panel adopts nothing it did not make on its own machine, `local` (docs/security.md "The panel
// adopts nothing it did not make"; issue 36, item 3), with the real useradd, nginx, PHP-FPM and
// MariaDB: what exists there under an account's names without the panel's mark is refused with a
// 422 naming the field, and stays exactly as it was.
// Run on the code before the fix: the account with an administrator's nginx file of its domain was
// made (201, the file written over), PHP was turned on over an unmarked pool file (200, written
// over), and an unmarked MariaDB database was refused only as "already exists", naming no field
// (those three tests failed). The Linux user of the account's name was refused on `local` before
// too (the panel's machine was checked, and only it): that test passed on both.

const MYSQL_URL = process.env.TEST_MYSQL_URL ?? "mysql://root@127.0.0.1:3306";
const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-marks-local-"));
let servers: WebServers;
const tag = randomBytes(3).toString("hex");
const linuxUsers: string[] = [];

async function asRoot<T>(work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
  const connection = await mysql.createConnection({ uri: MYSQL_URL, multipleStatements: true });
  try {
    return await work(connection);
  } finally {
    await connection.end();
  }
}

before(async () => {
  fs.chmodSync(root, 0o755);
  servers = await startWebServers(path.join(root, "web"));
});

after(async () => {
  removeLinuxUsers(linuxUsers);
  await servers?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

const seed = async (db: Database) => ({
  adminKey: await makeKey(db, { scope: "admin" }),
  php82: await addPhpVersion(db, { version: "8.2" }, seedActor),
});

const [backend] = machineBackends("pglite");

describe(`what the panel's own machine has that the panel did not make (${backend})`, () => {
  let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
  const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
  before(async () => {
    env = await createEnvironment(backend, seed, { ...systemUsersHostingEnv(servers, root), MYSQL_PROVISION_URL: MYSQL_URL });
  });
  after(async () => {
    await env?.teardown();
    await asRoot(async (connection) => {
      const [databases] = await connection.query("SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?", [`%${tag}%`]);
      for (const { name } of databases as { name: string }[]) await connection.query(`DROP DATABASE \`${name}\``);
      const [users] = await connection.query("SELECT User AS name, Host AS host FROM mysql.user WHERE User LIKE ?", [`%${tag}%`]);
      for (const { name, host } of users as { name: string; host: string }[]) await connection.query("DROP USER ?@?", [name, host]);
      await connection.query("DELETE FROM `hosting-panel`.marks WHERE name LIKE ?", [`%${tag}%`]).catch(() => undefined);
    });
  });

  /** A new account on `local` (its Linux user is removed after the file's tests). */
  async function account(username: string, domain = `${username}.example`) {
    linuxUsers.push(username);
    return admin().post("/api/admin/accounts", { username, domain });
  }

  test("an account named like a Linux user the panel did not make: 422 at username, the user as it was", async () => {
    const username = `lsvc${tag}`;
    linuxUsers.push(username);
    execFileSync("useradd", ["--system", "--home-dir", "/nonexistent", "--no-create-home", "--shell", "/bin/sh", "--user-group", username]);
    const before = execFileSync("getent", ["passwd", username], { encoding: "utf8" });
    const refused = await account(username);
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.ok(refused.body.errors.username, JSON.stringify(refused.body));
    assert.equal(execFileSync("getent", ["passwd", username], { encoding: "utf8" }), before);
    assert.equal(fs.existsSync(path.join(root, "home", username)), false);
  });

  test("an administrator's nginx file of the new account's domain: 422 at domain, the file as it was, no user or home left", async () => {
    const username = `lweb${tag}`;
    const file = path.join(servers.env.NGINX_SITES_DIR, `${username}.example.conf`);
    fs.writeFileSync(file, "# an administrator's own server block\n");
    const refused = await account(username);
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.match(refused.body.errors.domain?.[0] ?? "", /did not write/, JSON.stringify(refused.body));
    assert.equal(fs.readFileSync(file, "utf8"), "# an administrator's own server block\n");
    assert.throws(() => execFileSync("getent", ["passwd", username]), "no Linux user left");
    assert.equal(fs.existsSync(path.join(root, "home", username)), false, "no home left");
  });

  test("a PHP-FPM pool file of the account's name the panel did not write: PHP refused (422), the file as it was", async () => {
    const username = `lphp${tag}`;
    assert.equal((await account(username)).status, 201);
    const file = path.join(servers.env.PHP_FPM_POOL_DIR.replaceAll("{version}", "8.2"), `panel-${username}.conf`);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "; an administrator's own pool\n");
    const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
    const [main] = (await client.get("/api/client/domains")).body;
    const refused = await client.post("/api/client/account/configure-php", { domain_id: main.id, php_version_id: env.seed.php82.id });
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.match(refused.body.error, /did not write/, JSON.stringify(refused.body));
    assert.equal(fs.readFileSync(file, "utf8"), "; an administrator's own pool\n");
  });

  test("a MariaDB database and user of the account's names the panel did not make: 422 naming the field, neither touched, not even by a termination", async () => {
    const username = `ldb${tag}`;
    const created = await account(username);
    assert.equal(created.status, 201, JSON.stringify(created.body));
    // The user at the host the panel makes its users at (MYSQL_USER_HOST, `%`): the same MariaDB account.
    const [database, user] = [`${username}_shop`, `${username}_app`];
    await asRoot((connection) =>
      connection.query(`CREATE DATABASE \`${database}\`; CREATE TABLE \`${database}\`.t (v VARCHAR(20)); INSERT INTO \`${database}\`.t VALUES ('theirs'); CREATE USER ?@'%' IDENTIFIED BY 'their own password'; GRANT SELECT ON \`${database}\`.* TO ?@'%'`, [user, user]),
    );
    const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
    const refusedDatabase = await client.post("/api/client/databases", { database_name: "shop" });
    assert.equal(refusedDatabase.status, 422, JSON.stringify(refusedDatabase.body));
    assert.match(refusedDatabase.body.errors.database_name?.[0] ?? "", /did not make/, JSON.stringify(refusedDatabase.body));
    const refusedUser = await client.post("/api/client/database-users", { username: "app", password: "a long enough password" });
    assert.equal(refusedUser.status, 422, JSON.stringify(refusedUser.body));
    assert.match(refusedUser.body.errors.username?.[0] ?? "", /did not make/, JSON.stringify(refusedUser.body));
    // The panel's own database of that account, made and then terminated with it.
    assert.equal((await client.post("/api/client/databases", { database_name: "own" })).status, 201);
    assert.equal((await admin().delete(`/api/admin/accounts/${created.body.id}`)).status, 200);
    await asRoot(async (connection) => {
      const [rows] = await connection.query(`SELECT v FROM \`${database}\`.t`);
      assert.deepEqual(rows, [{ v: "theirs" }]);
      const [users] = await connection.query("SELECT User AS user FROM mysql.user WHERE User = ?", [user]);
      assert.equal((users as unknown[]).length, 1, "their user is still there");
      const [own] = await connection.query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", [`${username}_own`]);
      assert.equal((own as unknown[]).length, 0, "the panel's own database went with the account");
    });
  });
});
