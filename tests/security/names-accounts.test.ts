import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { hostingAccounts } from "@/db/schema";
import { createAccount } from "@/lib/accounts/service";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedActor } from "../support/seed";

// Names that belong to someone else: a Linux group of the machine taken as a username (useradd
// --user-group would fail on it, or worse, the account would get that group's rights), and
// database names inside another account's prefix (account `a` making `a_b_x`, which is account
// `a_b`'s by its name: its grants, its backups, its termination).

const linuxGroups = () => fs.readFileSync("/etc/group", "utf8").split("\n").map((line) => line.split(":")[0]);

async function seedPrefixes(db: Database) {
  const a = await createAccount(db, { username: "a", domain: "a.example" }, seedActor);
  // An account made before usernames lost their `_` (the rule that keeps prefixes apart now).
  const legacy = await createAccount(db, { username: "ab", domain: "a-b.example" }, seedActor);
  await db.update(hostingAccounts).set({ username: "a_b" }).where(eq(hostingAccounts.id, legacy.id));
  return {
    adminKey: await makeKey(db, { scope: "admin" }),
    aKey: await makeKey(db, { scope: "account", account_id: a.id }),
    legacyKey: await makeKey(db, { scope: "account", account_id: legacy.id }),
  };
}

for (const backend of testBackends()) {
  describe(`database names stay inside their own account's prefix (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seedPrefixes>>>;
    before(async () => {
      env = await createEnvironment(backend, seedPrefixes);
    });
    after(async () => {
      await env?.teardown();
    });
    const as = (key: { key: string; secret: string }) => apiClient(env.server.baseUrl, key);

    test("account a cannot make a database or database user in account a_b's prefix (422)", async () => {
      for (const database_name of ["a_b_x", "b_x"]) {
        const refused = await as(env.seed.aKey).post("/api/client/databases", { database_name });
        assert.equal(refused.status, 422, `${database_name}: ${JSON.stringify(refused.body)}`);
        assert.ok(refused.body.errors.database_name);
      }
      const user = await as(env.seed.aKey).post("/api/client/database-users", { username: "b_shop", password: "a long enough password" });
      assert.equal(user.status, 422, JSON.stringify(user.body));
      assert.ok(user.body.errors.username);
      assert.equal((await as(env.seed.aKey).get("/api/client/databases")).status, 404, "none was made");
    });

    test("each account still makes its own names, the legacy one included", async () => {
      assert.equal((await as(env.seed.aKey).post("/api/client/databases", { database_name: "bx" })).body.database_name, "a_bx");
      assert.equal((await as(env.seed.aKey).post("/api/client/databases", { database_name: "c_x" })).body.database_name, "a_c_x");
      assert.equal((await as(env.seed.legacyKey).post("/api/client/databases", { database_name: "x" })).body.database_name, "a_b_x");
      const user = await as(env.seed.legacyKey).post("/api/client/database-users", { username: "shop", password: "a long enough password" });
      assert.equal(user.body.username, "a_b_shop");
    });

    test("a new username with _ is refused (422 at username): no new prefix can lie inside another", async () => {
      const refused = await apiClient(env.server.baseUrl, env.seed.adminKey).post("/api/admin/accounts", { username: "a_c", domain: "a-c.example" });
      assert.equal(refused.status, 422);
      assert.ok(refused.body.errors.username);
    });
  });
}

describe("usernames that are Linux groups of the machine (SYSTEM_USERS=1)", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-group-names-"));
  let env: TestEnvironment<{ adminKey: { key: string; secret: string } }>;
  before(async () => {
    env = await createEnvironment(testBackends()[0], async (db) => ({ adminKey: await makeKey(db, { scope: "admin" }) }), {
      SYSTEM_USERS: "1",
      HOME_ROOT: path.join(root, "home"),
    });
  });
  after(async () => {
    await env?.teardown();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test("sudo (and every other group here that is no user) is refused like a user (422 at username); nothing is made", async () => {
    const users = new Set(fs.readFileSync("/etc/passwd", "utf8").split("\n").map((line) => line.split(":")[0]));
    const groups = linuxGroups().filter((name) => /^[a-z][a-z0-9]{0,31}$/.test(name) && !users.has(name));
    assert.ok(groups.includes("sudo"), "this machine has a sudo group");
    for (const username of groups) {
      const refused = await apiClient(env.server.baseUrl, env.seed.adminKey).post("/api/admin/accounts", { username, domain: `${username}.example` });
      assert.equal(refused.status, 422, `${username}: ${JSON.stringify(refused.body)}`);
      assert.match(refused.body.errors.username?.[0] ?? "", /reserved by the server/, `${username}: ${JSON.stringify(refused.body)}`);
      assert.throws(() => execFileSync("getent", ["passwd", username]), `no Linux user ${username}`);
      assert.equal(fs.existsSync(path.join(root, "home", username)), false);
    }
  });
});
