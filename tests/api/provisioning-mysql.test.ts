import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";
import mysql from "mysql2/promise";
import type { Database } from "@/db/client";
import { createAccount } from "@/lib/accounts/service";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedActor } from "../support/seed";

// Customer databases on the machine's real MariaDB: after API calls, connect as the created user
// with its password and prove what it can and cannot do; failures leave no record and no orphan.

const ROOT_URL = process.env.TEST_MYSQL_URL ?? "mysql://root@127.0.0.1:3306";
const LIMITED_USER = `panel_limited_${process.pid}`;

async function root() {
  return mysql.createConnection({ uri: ROOT_URL, multipleStatements: false });
}

async function serverHas(kind: "database" | "user", name: string): Promise<boolean> {
  const connection = await root();
  try {
    const [rows] =
      kind === "database"
        ? await connection.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = ?", [name])
        : await connection.query("SELECT 1 FROM mysql.user WHERE user = ?", [name]);
    return (rows as unknown[]).length > 0;
  } finally {
    await connection.end();
  }
}

function seedFor(username: string) {
  return async (db: Database) => {
    const account = await createAccount(db, { username, domain: `${username}.example` }, seedActor);
    return { key: await makeKey(db, { scope: "account", account_id: account.id }) };
  };
}

for (const backend of machineBackends("postgres")) {
  const username = `m${randomBytes(4).toString("hex")}`;
  describe(`MariaDB provisioning (${backend})`, () => {
    let env: TestEnvironment<{ key: { key: string; secret: string } }>;
    before(async () => {
      env = await createEnvironment(backend, seedFor(username), { MYSQL_PROVISION_URL: ROOT_URL });
    });
    after(async () => {
      await env?.teardown();
      const connection = await root();
      await connection.query(`DROP DATABASE IF EXISTS \`${username}_shop\``);
      await connection.query("DROP USER IF EXISTS ?@'%'", [`${username}_app`]);
      await connection.end();
    });

    test("a user granted SELECT can read and cannot drop; detached it cannot reach the database; deletes remove both", async () => {
      const client = apiClient(env.server.baseUrl, env.seed.key);
      const database = await client.post("/api/client/databases", { database_name: "shop" });
      assert.equal(database.status, 201, JSON.stringify(database.body));
      assert.ok(await serverHas("database", `${username}_shop`));
      const user = await client.post("/api/client/database-users", { username: "app", password: "pass-w0rd-long" });
      assert.equal(user.status, 201);
      assert.ok(await serverHas("user", `${username}_app`));

      const admin = await root();
      await admin.query(`CREATE TABLE \`${username}_shop\`.items (id INT PRIMARY KEY)`);
      await admin.query(`INSERT INTO \`${username}_shop\`.items VALUES (1), (2)`);
      await admin.end();

      const assigned = await client.post(`/api/client/database-users/${user.body.id}/assign-database`, {
        database_id: database.body.id,
        privileges: ["SELECT"],
      });
      assert.equal(assigned.status, 200);
      const asUser = () =>
        mysql.createConnection({ host: "127.0.0.1", port: 3306, user: `${username}_app`, password: "pass-w0rd-long", database: `${username}_shop` });
      const connection = await asUser();
      const [rows] = await connection.query("SELECT id FROM items ORDER BY id");
      assert.deepEqual((rows as { id: number }[]).map((row) => row.id), [1, 2]);
      await assert.rejects(connection.query("DROP TABLE items"), /denied/i);
      await connection.end();
      // In GRANT, "_" is a wildcard: the grant on <user>_shop must not open <user>xshop.
      const lookalike = await root();
      await lookalike.query(`CREATE DATABASE \`${username}xshop\``);
      await lookalike.end();
      try {
        await assert.rejects(
          mysql.createConnection({ host: "127.0.0.1", port: 3306, user: `${username}_app`, password: "pass-w0rd-long", database: `${username}xshop` }),
          /denied/i,
        );
      } finally {
        const cleanup = await root();
        await cleanup.query(`DROP DATABASE IF EXISTS \`${username}xshop\``);
        await cleanup.end();
      }

      const usage = await client.get("/api/client/account/usage-details");
      assert.equal(usage.body.provisioning.databases, true);
      assert.equal(usage.body.database_sizes[0].database_name, `${username}_shop`);
      assert.ok(usage.body.database_sizes[0].size_mb >= 0);

      const detached = await client.delete(`/api/client/database-users/${user.body.id}/databases/${database.body.id}`);
      assert.equal(detached.status, 200);
      await assert.rejects(asUser(), /denied/i);

      assert.equal((await client.delete(`/api/client/database-users/${user.body.id}`)).status, 200);
      assert.equal((await client.delete(`/api/client/databases/${database.body.id}`)).status, 200);
      assert.equal(await serverHas("database", `${username}_shop`), false);
      assert.equal(await serverHas("user", `${username}_app`), false);
    });
  });

  describe(`MariaDB provisioning failures (${backend})`, () => {
    const failing = `f${randomBytes(4).toString("hex")}`;
    let limited: TestEnvironment<{ key: { key: string; secret: string } }>;
    let stopped: TestEnvironment<{ key: { key: string; secret: string } }>;
    before(async () => {
      const admin = await root();
      await admin.query("DROP USER IF EXISTS ?@'%'", [LIMITED_USER]);
      await admin.query("CREATE USER ?@'%' IDENTIFIED BY 'limited-pass'", [LIMITED_USER]);
      await admin.query("GRANT CREATE USER ON *.* TO ?@'%'", [LIMITED_USER]); // no CREATE (database)
      // The panel's own schema (its marks, docs/security.md "The panel adopts nothing it did not make").
      await admin.query("GRANT ALL PRIVILEGES ON `hosting-panel`.* TO ?@'%'", [LIMITED_USER]);
      await admin.end();
      const limitedUrl = `mysql://${LIMITED_USER}:limited-pass@127.0.0.1:3306`;
      limited = await createEnvironment(backend, seedFor(failing), { MYSQL_PROVISION_URL: limitedUrl });
      stopped = await createEnvironment(backend, seedFor(failing), { MYSQL_PROVISION_URL: "mysql://root@127.0.0.1:1" });
    });
    after(async () => {
      await limited?.teardown();
      await stopped?.teardown();
      const admin = await root();
      await admin.query("DROP USER IF EXISTS ?@'%'", [LIMITED_USER]);
      await admin.end();
    });

    test("422 with a clear error, no record and no orphan, when the provisioning login lacks a privilege", async () => {
      const client = apiClient(limited.server.baseUrl, limited.seed.key);
      const response = await client.post("/api/client/databases", { database_name: "nope" });
      assert.equal(response.status, 422);
      assert.match(response.body.error, /Could not create database .*denied/i);
      assert.equal((await client.get("/api/client/databases")).status, 404, "no record");
      assert.equal(await serverHas("database", `${failing}_nope`), false, "no orphan");
    });

    test("422 (DESIGN: a server-side failure → 422) and no record when the database server is down", async () => {
      const client = apiClient(stopped.server.baseUrl, stopped.seed.key);
      const database = await client.post("/api/client/databases", { database_name: "down" });
      assert.equal(database.status, 422);
      assert.match(database.body.error, /unavailable/);
      const user = await client.post("/api/client/database-users", { username: "down", password: "long-enough-pw" });
      assert.equal(user.status, 422);
      assert.match(user.body.error, /unavailable/);
      assert.equal((await client.get("/api/client/databases")).status, 404);
      assert.equal((await client.get("/api/client/database-users")).status, 404);
      assert.ok(!JSON.stringify(user.body).includes("long-enough-pw"), "no password in errors");
    });
  });
}
