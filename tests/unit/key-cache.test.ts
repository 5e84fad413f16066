import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { sharedReadAfterArrival } from "@/lib/auth/key-cache";
import { type Backend, createTestDatabase, type TestDatabase, testBackends } from "../support/database";

// In one process (PGlite's only mode), revocation through lib/ services defeats the key cache on
// the very next authentication. The process has one connection, so this file uses one backend:
// PGlite when it is among TEST_BACKENDS (across processes, see tests/api/revocation.test.ts).

const backend: Backend = testBackends().includes("pglite") ? "pglite" : "postgres";
let database: TestDatabase;

before(async () => {
  database = await createTestDatabase(backend);
  Object.assign(process.env, database.env);
});
after(async () => {
  const { connection } = await import("@/db/client");
  await (await connection()).close();
  await database.drop();
});

test(`a disabled, re-scoped or deleted key is refused on the next authentication (${backend}, in process)`, async () => {
  const { connection, getDb } = await import("@/db/client");
  const { prepareDatabase } = await import("@/db/prepare");
  const { authenticate, AuthFailure } = await import("@/lib/auth/authenticate");
  const { createApiKey, updateApiKey, deleteApiKey } = await import("@/lib/api-keys/service");
  await prepareDatabase(await connection());
  const db = await getDb();
  const actor = { type: "system" } as const;
  const created = await createApiKey(db, { name: "cache", scope: "admin" }, actor);
  const operation = { method: "GET", path: "/api/metrics/history", audience: "admin" } as const;
  const headers = { apiKey: created.key, apiSecret: created.secret, hostingAccount: null };

  const status = async () => {
    try {
      await authenticate(operation, headers, "127.0.0.1");
      return 200;
    } catch (error) {
      if (error instanceof AuthFailure) return error.status;
      throw error;
    }
  };

  assert.equal(await status(), 200);
  assert.equal(await status(), 200, "served from the cache");
  await updateApiKey(db, created.id, { is_enabled: false }, actor);
  assert.equal(await status(), 403);
  await updateApiKey(db, created.id, { is_enabled: true }, actor);
  assert.equal(await status(), 200);
  await updateApiKey(db, created.id, { allowed_ips: ["10.0.0.0/8"] }, actor);
  assert.equal(await status(), 403);
  await deleteApiKey(db, created.id, actor);
  assert.equal(await status(), 401);
});

test("generation reads are shared, but a caller is only answered by a read started after it called", async () => {
  const reads: { finish: () => void }[] = [];
  const refresh = sharedReadAfterArrival(() => new Promise<void>((resolve) => reads.push({ finish: resolve })));
  const settled = (call: Promise<void>) => {
    const state = { done: false };
    void call.then(() => (state.done = true));
    return state;
  };
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  const first = refresh(); // starts read 0
  const second = settled(refresh()); // read 0 started before it: queued behind it
  const third = settled(refresh()); // joins the queued read
  assert.equal(reads.length, 1, "one read under way, one queued");
  reads[0].finish();
  await first;
  await tick();
  assert.deepEqual([second.done, third.done], [false, false], "read 0 started too early to answer them");
  assert.equal(reads.length, 2, "the queued read started once read 0 ended");
  reads[1].finish();
  await tick();
  assert.deepEqual([second.done, third.done], [true, true]);
  assert.equal(reads.length, 2, "three callers, two reads");
  const fourth = refresh(); // nothing under way: a read of its own
  assert.equal(reads.length, 3);
  reads[2].finish();
  await fourth;
});
