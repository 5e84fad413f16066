import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { createAccount } from "@/lib/accounts/service";
import { createPlan } from "@/lib/plans/service";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedActor, seedTenants } from "../support/seed";

// Databases, database users and their links, over HTTP, on each backend.

async function seed(db: Database) {
  const tenants = await seedTenants(db);
  await createPlan(db, { name: "five", max_databases: 5, max_database_users: 2 }, seedActor);
  const quota = await createAccount(db, { username: "quota", domain: "quota.example", plan: "five" }, seedActor);
  return { ...tenants, quotaKey: await makeKey(db, { scope: "account", account_id: quota.id }) };
}

for (const backend of testBackends()) {
  describe(`client databases and users (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    before(async () => {
      env = await createEnvironment(backend, seed);
    });
    after(async () => {
      await env?.teardown();
    });
    const alice = () => apiClient(env.server.baseUrl, env.seed.aliceKey);

    test("404 listing databases and users of an account that has none", async () => {
      const databases = await alice().get("/api/client/databases");
      assert.equal(databases.status, 404);
      assert.deepEqual(databases.body, { error: "No databases found" });
      const users = await alice().get("/api/client/database-users");
      assert.equal(users.status, 404);
      assert.deepEqual(users.body, { error: "No database users found" });
    });

    test("a database gets the account prefix; a prefixed name is kept; 422 for duplicates and bad names", async () => {
      const shop = await alice().post("/api/client/databases", { database_name: "shop" });
      assert.equal(shop.status, 201);
      assert.equal(shop.body.database_name, "alice_shop");
      assert.deepEqual(shop.body.users, []);
      assert.equal(shop.body.size_mb, null);
      const kept = await alice().post("/api/client/databases", { database_name: "alice_blog" });
      assert.equal(kept.body.database_name, "alice_blog");
      const duplicate = await alice().post("/api/client/databases", { database_name: "alice_shop" });
      assert.equal(duplicate.status, 422);
      assert.ok(duplicate.body.errors.database_name);
      for (const name of ["bad-name", "x;drop", "", "a".repeat(60), "ü"]) {
        const bad = await alice().post("/api/client/databases", { database_name: name });
        assert.equal(bad.status, 422, name);
      }
      const list = await alice().get("/api/client/databases");
      assert.deepEqual(list.body.map((d: { database_name: string }) => d.database_name), ["alice_shop", "alice_blog"]);
      assert.equal((await alice().get(`/api/client/databases/${shop.body.id}`)).body.database_name, "alice_shop");
    });

    test("users: prefix, 50-character limit, password ≥ 8 never returned", async () => {
      const created = await alice().post("/api/client/database-users", { username: "app", password: "s3cret-pass" });
      assert.equal(created.status, 201);
      assert.equal(created.body.username, "alice_app");
      assert.deepEqual(created.body.databases, []);
      assert.ok(!JSON.stringify(created.body).includes("s3cret-pass"));
      assert.equal((await alice().post("/api/client/database-users", { username: "short", password: "1234567" })).status, 422);
      assert.equal((await alice().post("/api/client/database-users", { username: "u".repeat(45), password: "long enough" })).status, 422);
      assert.equal((await alice().post("/api/client/database-users", { username: "app", password: "another-pass" })).status, 422);
    });

    test("assign with privileges, again replaces them, detach twice → 404; links block deletes (409)", async () => {
      const [database] = (await alice().get("/api/client/databases")).body;
      const [user] = (await alice().get("/api/client/database-users")).body;
      const assign = (body: object) => alice().post(`/api/client/database-users/${user.id}/assign-database`, body);
      const first = await assign({ database_id: database.id, privileges: ["select", "Insert"] });
      assert.equal(first.status, 200);
      assert.equal(typeof first.body.message, "string");
      let linked = (await alice().get(`/api/client/database-users/${user.id}`)).body;
      assert.deepEqual(linked.databases, [{ id: database.id, database_name: database.database_name, privileges: ["INSERT", "SELECT"] }]);
      const again = await assign({ database_id: database.id });
      assert.equal(again.status, 200);
      assert.equal(again.body.message, "Privileges updated");
      linked = (await alice().get(`/api/client/databases/${database.id}`)).body;
      assert.deepEqual(linked.users, [{ id: user.id, username: user.username, privileges: ["ALL PRIVILEGES"] }]);
      assert.equal((await assign({ database_id: database.id, privileges: ["SELECT", "FLY"] })).status, 422);
      assert.equal((await assign({ database_id: 999999 })).status, 404);

      assert.equal((await alice().delete(`/api/client/databases/${database.id}`)).status, 409);
      assert.equal((await alice().delete(`/api/client/database-users/${user.id}`)).status, 409);

      const detach = () => alice().delete(`/api/client/database-users/${user.id}/databases/${database.id}`);
      assert.equal((await detach()).status, 200);
      assert.equal((await detach()).status, 404);
      assert.equal((await alice().delete(`/api/client/databases/${database.id}`)).status, 200);
      assert.equal((await alice().delete(`/api/client/database-users/${user.id}`)).status, 200);
      assert.equal((await alice().get(`/api/client/databases/${database.id}`)).status, 404);
    });

    test("another account's databases and users are not found, and stay untouched", async () => {
      const [database] = (await alice().get("/api/client/databases")).body;
      const bob = apiClient(env.server.baseUrl, env.seed.bobKey);
      assert.equal((await bob.get(`/api/client/databases/${database.id}`)).status, 404);
      assert.equal((await bob.delete(`/api/client/databases/${database.id}`)).status, 404);
      const admin = apiClient(env.server.baseUrl, env.seed.adminKey, "bob");
      assert.equal((await admin.get(`/api/client/databases/${database.id}`)).status, 404);
      assert.equal((await alice().get(`/api/client/databases/${database.id}`)).status, 200);
    });

    test("50 concurrent creates on a quota of 5 leave exactly 5", async () => {
      const client = apiClient(env.server.baseUrl, env.seed.quotaKey);
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) => client.post("/api/client/databases", { database_name: `db${i}` })),
      );
      const statuses = responses.map((response) => response.status);
      assert.equal(statuses.filter((status) => status === 201).length, 5);
      assert.equal(statuses.filter((status) => status === 422).length, 45);
      assert.equal((await client.get("/api/client/databases")).body.length, 5);
      const usage = await client.get("/api/client/account/usage-details");
      assert.deepEqual(usage.body.databases, { used: 5, limit: 5 });
    });
  });
}
