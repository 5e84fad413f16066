import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import { apiKeys, hostingAccounts } from "@/db/schema";
import { deleteApiKey, updateApiKey } from "@/lib/api-keys/service";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { startServer, type TestServer } from "../support/server";
import { seedActor, seedTenants } from "../support/seed";

// Revocation holds on the very next request, on every instance sharing one PostgreSQL database,
// although each instance caches keys (lib/auth/key-cache.ts). The changes are made by a third
// process (this test) straight through lib/ services, as the command line or the UI would.

describe("revocation across two server instances (postgres)", () => {
  let env: TestEnvironment<Awaited<ReturnType<typeof seedTenants>>>;
  let second: TestServer;

  before(async () => {
    env = await createEnvironment("postgres", seedTenants);
    second = await startServer(env.database.env);
  });
  after(async () => {
    await second?.stop();
    await env?.teardown();
  });

  const bothServers = () => [env.server.baseUrl, second.baseUrl];

  async function statusesOn(servers: string[], key: { key: string; secret: string }, account?: string) {
    const statuses = [];
    for (const server of servers) statuses.push((await apiClient(server, key, account).get("/api/client/account")).status);
    return statuses;
  }

  test("disabling a key is refused on the next request on both instances; enabling restores it", async () => {
    const key = env.seed.aliceKey;
    assert.deepEqual(await statusesOn(bothServers(), key), [200, 200], "warm both caches");
    await updateApiKey(env.db!, key.id, { is_enabled: false }, seedActor);
    assert.deepEqual(await statusesOn(bothServers(), key), [403, 403]);
    await updateApiKey(env.db!, key.id, { is_enabled: true }, seedActor);
    assert.deepEqual(await statusesOn(bothServers(), key), [200, 200]);
  });

  test("an IP restriction added by an edit holds on the next request on both instances", async () => {
    const key = env.seed.bobKey;
    assert.deepEqual(await statusesOn(bothServers(), key), [200, 200]);
    await updateApiKey(env.db!, key.id, { allowed_ips: ["198.51.100.0/24"] }, seedActor);
    assert.deepEqual(await statusesOn(bothServers(), key), [403, 403]);
    await updateApiKey(env.db!, key.id, { allowed_ips: [] }, seedActor);
    assert.deepEqual(await statusesOn(bothServers(), key), [200, 200]);
  });

  test("an endpoint restriction added by an edit holds on the next request on both instances", async () => {
    const key = env.seed.adminKey;
    assert.deepEqual(await statusesOn(bothServers(), key, "alice"), [200, 200]);
    await updateApiKey(env.db!, key.id, { allow_all_endpoints: false, allowed_endpoints: ["GET /api/client/domains"] }, seedActor);
    assert.deepEqual(await statusesOn(bothServers(), key, "alice"), [403, 403]);
    await updateApiKey(env.db!, key.id, { allow_all_endpoints: true }, seedActor);
    assert.deepEqual(await statusesOn(bothServers(), key, "alice"), [200, 200]);
  });

  test("suspending an account stops its own key at once; admin keys still act on it", async () => {
    const key = env.seed.aliceKey;
    assert.deepEqual(await statusesOn(bothServers(), key), [200, 200]);
    await env.db!.update(hostingAccounts).set({ status: "suspended" }).where(eq(hostingAccounts.id, env.seed.alice.id));
    assert.deepEqual(await statusesOn(bothServers(), key), [403, 403]);
    assert.deepEqual(await statusesOn(bothServers(), env.seed.adminKey, "alice"), [200, 200]);
    await env.db!.update(hostingAccounts).set({ status: "active" }).where(eq(hostingAccounts.id, env.seed.alice.id));
    assert.deepEqual(await statusesOn(bothServers(), key), [200, 200]);
  });

  test("a deleted key is unknown (401) on the next request on both instances", async () => {
    const key = env.seed.resellerKey;
    assert.deepEqual(await statusesOn(bothServers(), key, "alice"), [200, 200]);
    await deleteApiKey(env.db!, key.id, seedActor);
    assert.deepEqual(await statusesOn(bothServers(), key, "alice"), [401, 401]);
  });

  test("last_used_at and last_used_ip are recorded, at most once a minute", async () => {
    const key = env.seed.bobKey;
    await env.db!.update(apiKeys).set({ lastUsedAt: null, lastUsedIp: null }).where(eq(apiKeys.id, key.id));
    // A fresh instance has written nothing for this key yet in its own throttle.
    const third = await startServer(env.database.env);
    try {
      assert.equal((await apiClient(third.baseUrl, key).get("/api/client/account")).status, 200);
      let row;
      for (let attempt = 0; attempt < 50; attempt++) {
        [row] = await env.db!.select().from(apiKeys).where(eq(apiKeys.id, key.id));
        if (row.lastUsedAt) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(row!.lastUsedAt, "last_used_at written");
      assert.equal(row!.lastUsedIp, "127.0.0.1");
      const firstUse = row!.lastUsedAt!.getTime();
      for (let i = 0; i < 5; i++) await apiClient(third.baseUrl, key).get("/api/client/account");
      await new Promise((resolve) => setTimeout(resolve, 300));
      const [again] = await env.db!.select().from(apiKeys).where(eq(apiKeys.id, key.id));
      assert.equal(again.lastUsedAt!.getTime(), firstUse, "no second write within the minute");
    } finally {
      await third.stop();
    }
  });
});
