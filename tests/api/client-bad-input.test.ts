import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import fc from "fast-check";
import type { Database } from "@/db/client";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { seedTenants } from "../support/seed";

// Property-based: arbitrary bodies and queries on every client operation that takes one never
// cause a 500, always get a JSON {error}, and a refused request changes nothing.

const RUNS = Number(process.env.FC_RUNS ?? 25);

/** JSON values biased toward the fields these routes read, with wrong types and edge values. */
const fieldValue = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(2 ** 31),
  fc.constant(-1),
  fc.array(fc.string({ maxLength: 20 }), { maxLength: 4 }),
  fc.constantFrom("A", "CNAME", "SOA", "subdomain", "parked", "ALL PRIVILEGES", "@", "www", "xn--", "a".repeat(300)),
);
const fieldNames = [
  "database_name", "username", "password", "database_id", "privileges", "domain_id", "name", "type", "content",
  "ttl", "priority", "weight", "port", "domain", "domain_type", "domain_path", "parent_domain_id", "subdomain",
  "parked_on_domain_id", "php_version_id", "is_php_fpm_enabled", "plan_id", "status", "city", "is_auto_ssl_enabled",
];
const body = fc.oneof(
  fc.dictionary(fc.constantFrom(...fieldNames), fieldValue, { maxKeys: 6 }),
  fc.anything({ maxDepth: 2 }),
);

async function seed(db: Database) {
  return seedTenants(db);
}

for (const backend of testBackends()) {
  describe(`bad input on client operations (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    before(async () => {
      env = await createEnvironment(backend, seed);
    });
    after(async () => {
      await env?.teardown();
    });

    async function snapshot() {
      const client = apiClient(env.server.baseUrl, env.seed.bobKey);
      const domains = (await client.get("/api/client/domains")).body;
      const records = [];
      for (const domain of domains) records.push((await client.get(`/api/client/dns-records?domain_id=${domain.id}`)).body);
      return JSON.stringify([
        (await client.get("/api/client/account")).body,
        domains,
        records,
        (await client.get("/api/client/databases")).body,
        (await client.get("/api/client/database-users")).body,
      ]);
    }

    test("arbitrary bodies: never a 500, always a JSON error, nothing changed on refusal", async () => {
      const client = apiClient(env.server.baseUrl, env.seed.bobKey);
      const routes: [string, string][] = [
        ["PUT", "/api/client/account"],
        ["POST", "/api/client/account/configure-php"],
        ["POST", "/api/client/databases"],
        ["POST", "/api/client/database-users"],
        ["POST", "/api/client/database-users/1/assign-database"],
        ["POST", "/api/client/dns-records"],
        ["PUT", "/api/client/dns-records/1"],
        ["POST", "/api/client/domains"],
      ];
      for (const [method, path] of routes) {
        await fc.assert(
          fc.asyncProperty(body, async (value) => {
            const before = await snapshot();
            const response = method === "PUT" ? await client.put(path, value) : await client.post(path, value);
            assert.ok(response.status < 500, `${method} ${path} ${JSON.stringify(value)} → ${response.status} ${JSON.stringify(response.body)}`);
            if (response.status >= 400) {
              assert.equal(typeof response.body?.error, "string", `${method} ${path}: JSON error`);
              assert.equal(await snapshot(), before, `${method} ${path} ${JSON.stringify(value)} changed data`);
            }
          }),
          { numRuns: RUNS },
        );
      }
    });

    test("arbitrary queries: never a 500", async () => {
      const client = apiClient(env.server.baseUrl, env.seed.bobKey);
      await fc.assert(
        fc.asyncProperty(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), async (domainId, domain) => {
          for (const path of [
            `/api/client/dns-records?domain_id=${encodeURIComponent(domainId)}`,
            `/api/client/account/visitor-stats?domain=${encodeURIComponent(domain)}`,
          ]) {
            const response = await client.get(path);
            assert.ok(response.status < 500, `${path} → ${response.status}`);
            if (response.status >= 400) assert.equal(typeof response.body?.error, "string");
          }
        }),
        { numRuns: RUNS },
      );
    });
  });
}
