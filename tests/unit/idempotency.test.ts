import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import type { Connection } from "@/db/client";
import { createApiKey } from "@/lib/api-keys/service";
import { AppError } from "@/lib/errors";
import { runOnce, type StoredAnswer } from "@/lib/idempotency/service";
import { createTestDatabase, type TestDatabase, testBackends } from "../support/database";

// lib/idempotency on each backend: what a retry gets while the first request runs, after it
// answered, after it failed, with another request under the same key, and once it expired.

const answer = (body: string): StoredAnswer => ({ status: 201, body });

async function errorOf(promise: Promise<unknown>) {
  const error = await promise.then(() => assert.fail("expected a refusal"), (caught: unknown) => caught);
  assert.ok(error instanceof AppError, String(error));
  return error;
}

for (const backend of testBackends()) {
  describe(`Idempotency-Key store (${backend})`, () => {
    let database: TestDatabase;
    let connection: Connection;
    let apiKeyId: number;
    before(async () => {
      database = await createTestDatabase(backend);
      connection = await database.open();
      apiKeyId = (await createApiKey(connection.db, { name: "billing", scope: "admin" }, { type: "system" })).id;
    });
    after(async () => {
      await connection?.close();
      await database?.drop();
    });

    test("a retry while the first runs answers 409 after waiting; once answered, it gets that answer without running", async () => {
      const claim = { apiKeyId, key: "slow", requestHash: "h1" };
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const first = runOnce(connection.db, claim, async () => {
        await released;
        return answer("first");
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const busy = await errorOf(runOnce(connection.db, claim, async () => assert.fail("must not run"), 200));
      assert.equal(busy.code, "CONFLICT");
      const waiting = runOnce(connection.db, claim, async () => assert.fail("must not run"), 5_000);
      release();
      assert.deepEqual(await first, answer("first"));
      assert.deepEqual(await waiting, answer("first"), "a waiting retry gets the first answer");
      assert.deepEqual(await runOnce(connection.db, claim, async () => assert.fail("must not run")), answer("first"));
    });

    test("another request under a used key is a 422 on Idempotency-Key", async () => {
      await runOnce(connection.db, { apiKeyId, key: "k2", requestHash: "a" }, async () => answer("a"));
      const refused = await errorOf(runOnce(connection.db, { apiKeyId, key: "k2", requestHash: "b" }, async () => assert.fail("must not run")));
      assert.equal(refused.code, "VALIDATION");
      assert.deepEqual(Object.keys(refused.fieldErrors ?? {}), ["Idempotency-Key"]);
    });

    test("a first request that threw or answered 5xx releases the key: the retry runs", async () => {
      const claim = { apiKeyId, key: "k3", requestHash: "a" };
      await assert.rejects(runOnce(connection.db, claim, async () => { throw new Error("database gone"); }), /database gone/);
      assert.deepEqual(await runOnce(connection.db, claim, async () => ({ status: 503, body: "{}" })), { status: 503, body: "{}" });
      assert.deepEqual(await runOnce(connection.db, claim, async () => answer("ran")), answer("ran"));
      assert.deepEqual(await runOnce(connection.db, claim, async () => answer("again")), answer("ran"));
    });

    test("an answer is kept 24 hours and a claim left unanswered 10 minutes, then the key is free", async () => {
      const backdate = (key: string, age: string) =>
        connection.db.execute(sql`update idempotency_keys set created_at = now() - ${age}::interval where key = ${key}`);
      const answered = { apiKeyId, key: "k4", requestHash: "a" };
      await runOnce(connection.db, answered, async () => answer("first"));
      await backdate("k4", "23 hours 59 minutes");
      assert.deepEqual(await runOnce(connection.db, answered, async () => answer("second")), answer("first"), "kept for 24 hours");
      await backdate("k4", "24 hours 1 minute");
      assert.deepEqual(await runOnce(connection.db, answered, async () => answer("second")), answer("second"), "then forgotten");

      // A claim without an answer: the first request's process died while it ran.
      const abandoned = { apiKeyId, key: "k5", requestHash: "a" };
      await connection.db.execute(sql`insert into idempotency_keys (api_key_id, key, request_hash) values (${apiKeyId}, 'k5', 'a')`);
      await backdate("k5", "9 minutes");
      await errorOf(runOnce(connection.db, abandoned, async () => assert.fail("must not run"), 200)).then((error) => assert.equal(error.code, "CONFLICT"));
      await backdate("k5", "11 minutes");
      assert.deepEqual(await runOnce(connection.db, abandoned, async () => answer("ran")), answer("ran"), "released after 10 minutes");
    });
  });
}
