import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import mysql from "mysql2/promise";
import type { Database } from "@/db/client";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { call, type Credentials } from "../support/http";
import { makeKey } from "../support/seed";

// Suspend and terminate on the machine's real MariaDB. The panel provisions through a user of
// its own whose rights cover only this test's names, so the test can take DROP away from it and
// make a termination fail half-way, then give it back and finish with a second DELETE.

const ROOT_URL = process.env.TEST_MYSQL_URL ?? "mysql://root@127.0.0.1:3306";
const PASSWORD = "pass-w0rd-long";

async function asRoot<T>(work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
  const connection = await mysql.createConnection({ uri: ROOT_URL });
  try {
    return await work(connection);
  } finally {
    await connection.end();
  }
}

/** What the server holds of names starting with `prefix`: databases and users. */
async function serverHoldings(prefix: string) {
  return asRoot(async (connection) => {
    const [databases] = await connection.query("SHOW DATABASES LIKE ?", [`${prefix}%`]);
    const [users] = await connection.query("SELECT User AS user FROM mysql.user WHERE User LIKE ?", [`${prefix}%`]);
    return {
      databases: (databases as Record<string, string>[]).map((row) => Object.values(row)[0]),
      users: (users as { user: string }[]).map((row) => row.user),
    };
  });
}

for (const backend of machineBackends("postgres")) {
  const username = `l${randomBytes(4).toString("hex")}`;
  const provisioner = `panel_lc_${randomBytes(3).toString("hex")}`;
  const rights = `\`${username}%\`.*`;

  describe(`account lifecycle on MariaDB (${backend})`, () => {
    let env: TestEnvironment<{ adminKey: Credentials & { id: number } }>;
    before(async () => {
      await asRoot(async (connection) => {
        await connection.query("CREATE USER ?@'%' IDENTIFIED BY ?", [provisioner, PASSWORD]);
        await connection.query(`GRANT ALL PRIVILEGES ON ${rights} TO ?@'%' WITH GRANT OPTION`, [provisioner]);
        await connection.query("GRANT CREATE USER ON *.* TO ?@'%'", [provisioner]);
        // The panel's own schema (its marks, docs/security.md "The panel adopts nothing it did not make").
        await connection.query("GRANT ALL PRIVILEGES ON `hosting-panel`.* TO ?@'%'", [provisioner]);
      });
      env = await createEnvironment(backend, async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) }), {
        MYSQL_PROVISION_URL: `mysql://${provisioner}:${PASSWORD}@127.0.0.1:3306`,
      });
    });
    after(async () => {
      try {
        await env?.teardown();
      } finally {
        await asRoot(async (connection) => {
          await connection.query("DROP USER IF EXISTS ?@'%'", [provisioner]);
          const { databases, users } = await serverHoldings(username);
          for (const database of databases) await connection.query(`DROP DATABASE IF EXISTS \`${database}\``);
          for (const user of users) await connection.query("DROP USER IF EXISTS ?@'%'", [user]);
        });
      }
    });

    test("suspend locks the customer's database user, unsuspend unlocks it; terminate stopped half-way answers 422, a second DELETE finishes", async () => {
      const admin = (method: string, path: string, body?: unknown) =>
        call(env.server.baseUrl, method, path, { credentials: env.seed.adminKey, body });
      const inAccount = (method: string, path: string, body?: unknown) =>
        call(env.server.baseUrl, method, path, { credentials: env.seed.adminKey, account: username, body });

      const created = await admin("POST", "/api/admin/accounts", { username, domain: `${username}.example` });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const id = created.body.id;
      const database = await inAccount("POST", "/api/client/databases", { database_name: "shop" });
      assert.equal(database.status, 201, JSON.stringify(database.body));
      const user = await inAccount("POST", "/api/client/database-users", { username: "app", password: PASSWORD });
      assert.equal(user.status, 201, JSON.stringify(user.body));
      assert.equal((await inAccount("POST", `/api/client/database-users/${user.body.id}/assign-database`, { database_id: database.body.id })).status, 200);
      assert.deepEqual(await serverHoldings(username), { databases: [`${username}_shop`], users: [`${username}_app`] });

      const login = (user = "app") =>
        mysql
          .createConnection({ host: "127.0.0.1", port: 3306, user: `${username}_${user}`, password: PASSWORD })
          .then((connection) => connection.end());
      await login();

      const suspended = await admin("POST", `/api/admin/accounts/${id}/suspend`, { reason: "unpaid" });
      assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
      await assert.rejects(login(), /locked/i);
      assert.equal((await admin("POST", `/api/admin/accounts/${id}/suspend`)).status, 200, "suspending again: 200, still locked");
      await assert.rejects(login(), /locked/i);
      // A user an admin creates for the suspended account is born locked.
      assert.equal((await inAccount("POST", "/api/client/database-users", { username: "late", password: PASSWORD })).status, 201);
      await assert.rejects(login("late"), /locked/i);
      const unsuspended = await admin("POST", `/api/admin/accounts/${id}/unsuspend`);
      assert.equal(unsuspended.status, 200);
      await login();
      await login("late");

      // The panel's MariaDB user may no longer drop databases: terminate stops at that step.
      await asRoot((connection) => connection.query(`REVOKE DROP ON ${rights} FROM ?@'%'`, [provisioner]));
      const zoneFile = path.join(env.database.env.ZONES_DIR, `${username}.example.zone`);
      assert.ok(fs.existsSync(zoneFile));
      const stopped = await admin("DELETE", `/api/admin/accounts/${id}`);
      assert.equal(stopped.status, 422, JSON.stringify(stopped.body));
      assert.match(stopped.body.error, /MariaDB databases and users/);
      assert.deepEqual(stopped.body.errors, {
        failed: ["MariaDB databases and users"],
        left: ["MariaDB databases and users", "mail", "system user and home directory", "the panel's records"],
      });
      assert.doesNotMatch(stopped.body.error, /\/tmp|at .*\.ts/, "no internals in the answer");
      assert.equal(fs.existsSync(zoneFile), false, "the steps before it are done");
      assert.equal((await admin("GET", `/api/admin/accounts/${id}`)).status, 200, "the records stay until the servers are clean");
      assert.deepEqual((await serverHoldings(username)).databases, [`${username}_shop`]);

      await asRoot((connection) => connection.query(`GRANT DROP ON ${rights} TO ?@'%'`, [provisioner]));
      const finished = await admin("DELETE", `/api/admin/accounts/${id}`);
      assert.deepEqual([finished.status, finished.body], [200, { message: `Hosting account ${username} terminated` }]);
      assert.deepEqual(await serverHoldings(username), { databases: [], users: [] });
      assert.equal((await admin("GET", `/api/admin/accounts/${id}`)).status, 404);
      await assert.rejects(login(), /denied/i);
    });
  });
}
