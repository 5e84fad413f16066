import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Connection } from "@/db/client";
import { createAccount } from "@/lib/accounts/service";
import { endpointsOfferedTo, endpointsRefusedFor, offeredCount } from "@/lib/api-keys/endpoints";
import { mayHoldSecret } from "@/lib/api-keys/search-terms";
import { createApiKey, listApiKeys, searchApiKeysBySecret, updateApiKey } from "@/lib/api-keys/service";
import { newApiKeyToken, newApiSecret } from "@/lib/api-keys/tokens";
import { AppError } from "@/lib/errors";
import { operations } from "@/lib/http/registry";
import { ZodError } from "zod";
import { createTestDatabase, type TestDatabase, testBackends } from "../support/database";

// The API keys page's services (issue 39, item 1): what its search may put in a URL, what the
// list search matches (name, key, the secret's visible start; never a whole secret), the POST
// search of a secret, and the endpoints a key of each scope may be given. The page itself is
// e2e/api-keys-ui.spec.ts.

const actor = { type: "system" } as const;

describe("what the key list's search may put in a URL", () => {
  test("a secret, or any 12 base62 characters of one, never; names, keys and a secret's visible start, yes", () => {
    for (let i = 0; i < 50; i++) {
      const secret = newApiSecret();
      assert.equal(mayHoldSecret(secret), true);
      assert.equal(mayHoldSecret(`  ${secret.slice(5, 17)} `), true);
      assert.equal(mayHoldSecret(secret.slice(0, 4)), false);
      assert.equal(mayHoldSecret(`${secret.slice(0, 4)}••••••••••••`), false);
      assert.equal(mayHoldSecret(newApiKeyToken()), false, "a public key is no secret");
      assert.equal(mayHoldSecret(`${newApiKeyToken()} ${secret}`), true);
    }
    for (const name of ["Billing system", "bulk-key-07", "deploy script (2026)", "hcp_"]) assert.equal(mayHoldSecret(name), false, name);
  });
});

describe("the endpoints each scope is offered", () => {
  test("an account key only client operations, a reseller key those and the lifecycle, an admin key every one", () => {
    assert.equal(offeredCount("admin"), operations.length);
    assert.ok(endpointsOfferedTo("account").every((choice) => choice.endpoint.includes(" /api/client/")));
    assert.ok(endpointsOfferedTo("reseller").some((choice) => choice.endpoint === "POST /api/admin/accounts/{id}/suspend"));
    assert.ok(!endpointsOfferedTo("reseller").some((choice) => choice.endpoint.includes("/api/metrics/")));
    assert.equal(endpointsRefusedFor("account", ["GET /api/client/account"]), null);
    assert.match(endpointsRefusedFor("account", ["GET /api/metrics/history"])!, /^GET \/api\/metrics\/history is not open to account keys/);
  });
});

for (const backend of testBackends()) {
  describe(`API key search and endpoint scopes (${backend})`, () => {
    let database: TestDatabase;
    let connection: Connection;
    before(async () => {
      database = await createTestDatabase(backend);
      connection = await database.open();
    });
    after(async () => {
      await connection?.close();
      await database?.drop();
    });

    test("the list search matches name, key and the secret's visible start (mask and all), never a whole secret", async () => {
      const { db } = connection;
      const billing = await createApiKey(db, { name: "Billing system", scope: "admin" }, actor);
      await createApiKey(db, { name: "Deploy", scope: "admin" }, actor);
      const found = async (search: string) => (await listApiKeys(db, { search, per_page: 0 })).rows.map((row) => row.id);
      assert.ok((await found("billing")).includes(billing.id));
      assert.ok((await found(billing.key.slice(6, 14).toUpperCase())).includes(billing.id), "a key fragment, any case");
      assert.ok((await found(billing.secret.slice(0, 4))).includes(billing.id));
      assert.ok((await found(billing.secret_masked)).includes(billing.id), "as the list shows it");
      assert.deepEqual(await found(billing.secret), [], "a whole secret is not matched from a URL's search");
    });

    test("the POST search of a secret answers its key; of no key's secret, nothing", async () => {
      const { db } = connection;
      const key = await createApiKey(db, { name: "Found by its secret", scope: "admin" }, actor);
      const hit = await searchApiKeysBySecret(db, ` ${key.secret} `);
      assert.deepEqual(hit.secretOf, { id: key.id, name: "Found by its secret" });
      assert.deepEqual(hit.rows.map((row) => row.id), [key.id]);
      assert.ok(!JSON.stringify(hit).includes(key.secret), "the answer does not carry the secret");
      const miss = await searchApiKeysBySecret(db, newApiSecret());
      assert.equal(miss.secretOf, null);
      assert.equal(miss.total, 0);
    });

    test("an account key is refused admin routes, on create and when an edit narrows its scope", async () => {
      const { db } = connection;
      const account = await createAccount(db, { username: "scoped", domain: "scoped.example" }, actor);
      const refusal = async (promise: Promise<unknown>) => {
        const error = await promise.then(
          () => assert.fail("expected a validation error"),
          (caught: unknown) => caught,
        );
        // The schema refuses what the input holds (a ZodError: 422 at the field); the service what the stored key adds.
        if (error instanceof ZodError) return error.issues.find((issue) => issue.path[0] === "allowed_endpoints")?.message;
        assert.ok(error instanceof AppError && error.code === "VALIDATION", String(error));
        return error.fieldErrors?.allowed_endpoints?.[0];
      };
      assert.match(
        (await refusal(
          createApiKey(db, { name: "too wide", scope: "account", account_id: account.id, allow_all_endpoints: false, allowed_endpoints: ["GET /api/metrics/stats"] }, actor),
        ))!,
        /not open to account keys/,
      );
      const adminKey = await createApiKey(db, { name: "narrowed", scope: "admin", allow_all_endpoints: false, allowed_endpoints: ["GET /api/metrics/stats", "GET /api/client/account"] }, actor);
      assert.match((await refusal(updateApiKey(db, adminKey.id, { scope: "account", account_id: account.id }, actor)))!, /GET \/api\/metrics\/stats is not open/);
      const narrowed = await updateApiKey(db, adminKey.id, { scope: "account", account_id: account.id, allowed_endpoints: ["GET /api/client/account"] }, actor);
      assert.deepEqual(narrowed.allowed_endpoints, ["GET /api/client/account"]);
    });
  });
}
