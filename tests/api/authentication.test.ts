import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import { hostingAccounts } from "@/db/schema";
import { createAccount } from "@/lib/accounts/service";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient, call } from "../support/http";
import { makeKey, seedActor, seedTenants } from "../support/seed";

// Every row of DESIGN.md's authentication table, over HTTP against the real server.

async function seed(db: Parameters<typeof seedTenants>[0]) {
  const tenants = await seedTenants(db);
  const carol = await createAccount(db, { username: "carol", domain: "carol.example" }, seedActor);
  await db.update(hostingAccounts).set({ status: "suspended" }).where(eq(hostingAccounts.id, carol.id));
  return {
    ...tenants,
    carol,
    carolKey: await makeKey(db, { scope: "account", account_id: carol.id }),
    disabledKey: await makeKey(db, { scope: "admin", is_enabled: false }),
    loopbackOnlyKey: await makeKey(db, { scope: "admin", allowed_ips: ["127.0.0.0/8", "::1"] }),
    remoteOnlyKey: await makeKey(db, { scope: "admin", allowed_ips: ["203.0.113.7", "2001:db8::/32"] }),
    accountOnlyKey: await makeKey(db, {
      scope: "account",
      account_id: tenants.alice.id,
      allow_all_endpoints: false,
      allowed_endpoints: ["GET /api/client/account"],
    }),
  };
}

for (const backend of testBackends()) {
  describe(`authentication (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;

    before(async () => {
      env = await createEnvironment(backend, seed);
    });
    after(async () => {
      await env?.teardown();
    });

    const url = () => env.server.baseUrl;

    test("401 without X-API-Key or X-API-Secret", async () => {
      const { adminKey } = env.seed;
      const partialHeaders: Record<string, string>[] = [{}, { "x-api-key": adminKey.key }, { "x-api-secret": adminKey.secret }];
      for (const headers of partialHeaders) {
        const response = await call(url(), "GET", "/api/metrics/history", { headers });
        assert.equal(response.status, 401);
        assert.equal(typeof response.body.error, "string");
      }
    });

    test("401 for an unknown key and for a wrong secret", async () => {
      const { adminKey } = env.seed;
      const unknown = await apiClient(url(), { key: "hcp_doesnotexist", secret: adminKey.secret }).get("/api/client/account");
      assert.equal(unknown.status, 401);
      const wrong = await apiClient(url(), { key: adminKey.key, secret: `${adminKey.secret}x` }).get("/api/client/account");
      assert.equal(wrong.status, 401);
      assert.deepEqual(wrong.body, unknown.body, "no hint whether the key exists");
    });

    test("403 for a disabled key", async () => {
      const response = await apiClient(url(), env.seed.disabledKey, env.seed.alice.id).get("/api/client/account");
      assert.equal(response.status, 403);
      assert.match(response.body.error, /disabled/);
    });

    test("a key restricted to loopback works from loopback", async () => {
      const response = await apiClient(url(), env.seed.loopbackOnlyKey, "alice").get("/api/client/account");
      assert.equal(response.status, 200);
      assert.equal(response.body.username, "alice");
    });

    test("403 from an address outside the key's IP restriction", async () => {
      const response = await apiClient(url(), env.seed.remoteOnlyKey, "alice").get("/api/client/account");
      assert.equal(response.status, 403);
      assert.match(response.body.error, /127\.0\.0\.1/);
    });

    test("403 with a forged X-Forwarded-For when no proxy is trusted", async () => {
      for (const forged of ["203.0.113.7", "203.0.113.7, 127.0.0.1"]) {
        const response = await call(url(), "GET", "/api/client/account", {
          credentials: env.seed.remoteOnlyKey,
          account: "alice",
          headers: { "x-forwarded-for": forged, "x-real-ip": "203.0.113.7", forwarded: "for=203.0.113.7" },
        });
        assert.equal(response.status, 403, `forged ${forged}`);
      }
    });

    test("403 for an endpoint outside the key's list; its listed endpoint works", async () => {
      const client = apiClient(url(), env.seed.accountOnlyKey);
      assert.equal((await client.get("/api/client/account")).status, 200);
      const other = await client.get("/api/client/domains");
      assert.equal(other.status, 403);
      assert.match(other.body.error, /GET \/api\/client\/domains/);
    });

    test("403 for reseller and account keys on admin and metrics operations", async () => {
      for (const key of [env.seed.resellerKey, env.seed.aliceKey]) {
        assert.equal((await apiClient(url(), key).get("/api/metrics/history")).status, 403);
        assert.equal((await apiClient(url(), key).post("/api/admin/generate-sso-token")).status, 403);
      }
    });

    test("400 for admin and reseller keys on client operations without X-Hosting-Account", async () => {
      for (const key of [env.seed.adminKey, env.seed.resellerKey]) {
        const response = await apiClient(url(), key).get("/api/client/account");
        assert.equal(response.status, 400);
        assert.match(response.body.error, /X-Hosting-Account/);
      }
    });

    test("X-Hosting-Account by id or username scopes an admin key to that account", async () => {
      const byId = await apiClient(url(), env.seed.adminKey, env.seed.bob.id).get("/api/client/account");
      assert.equal(byId.status, 200);
      assert.equal(byId.body.username, "bob");
      const byName = await apiClient(url(), env.seed.adminKey, "alice").get("/api/client/domains");
      assert.equal(byName.status, 200);
      assert.deepEqual(
        byName.body.map((domain: { domain: string }) => domain.domain),
        ["alice.example"],
      );
    });

    test("404 for an unknown account, and the same 404 for an account outside the reseller's set", async () => {
      const unknown = await apiClient(url(), env.seed.adminKey, "nobody").get("/api/client/account");
      assert.equal(unknown.status, 404);
      const unknownId = await apiClient(url(), env.seed.resellerKey, 999999).get("/api/client/account");
      const foreign = await apiClient(url(), env.seed.resellerKey, "bob").get("/api/client/account");
      assert.equal(foreign.status, 404);
      assert.deepEqual(foreign.body, unknownId.body);
      const own = await apiClient(url(), env.seed.resellerKey, "alice").get("/api/client/account");
      assert.equal(own.status, 200);
      // An id beyond any account's (past the 32-bit ids) names no account either: the same 404.
      for (const id of ["2147483648", "9999999999"]) {
        const huge = await apiClient(url(), env.seed.adminKey, id).get("/api/client/account");
        assert.equal(huge.status, 404, id);
        assert.deepEqual(huge.body, unknownId.body, id);
      }
    });

    test("an account key ignores X-Hosting-Account and acts on its own account", async () => {
      const response = await apiClient(url(), env.seed.aliceKey, "bob").get("/api/client/account");
      assert.equal(response.status, 200);
      assert.equal(response.body.username, "alice");
    });

    test("403 for the key of a suspended account; admin and reseller keys still act on it", async () => {
      const own = await apiClient(url(), env.seed.carolKey).get("/api/client/account");
      assert.equal(own.status, 403);
      assert.match(own.body.error, /suspended/);
      const admin = await apiClient(url(), env.seed.adminKey, "carol").get("/api/client/account");
      assert.equal(admin.status, 200);
      assert.equal(admin.body.status, "suspended");
      assert.equal(admin.body.is_suspended, true);
    });

    test("404 JSON for unknown /api paths, before authentication", async () => {
      for (const path of ["/api", "/api/", "/api/nope", "/api/client/unknown", "/api/client/databases/1/extra"]) {
        const response = await call(url(), "GET", path);
        assert.equal(response.status, 404, path);
        assert.equal(typeof response.body.error, "string", path);
      }
    });

    test("405 JSON with Allow for a known path and a wrong method", async () => {
      const response = await call(url(), "PATCH", "/api/client/databases");
      assert.equal(response.status, 405);
      assert.equal(response.headers.get("allow"), "GET, POST, HEAD");
      assert.equal(typeof response.body.error, "string");
      const del = await call(url(), "DELETE", "/api/metrics/stats");
      assert.equal(del.status, 405);
    });

    test("404 for a path id that is not a positive integer", async () => {
      const client = apiClient(url(), env.seed.aliceKey);
      for (const id of ["abc", "0", "-1", "1.5", "1e3", "99999999999"]) {
        assert.equal((await client.get(`/api/client/domains/${id}`)).status, 404, id);
      }
    });

    test("400 for a malformed JSON body", async () => {
      const response = await call(url(), "POST", "/api/client/databases", {
        credentials: env.seed.aliceKey,
        rawBody: "{not json",
        headers: { "content-type": "application/json" },
      });
      assert.equal(response.status, 400);
      assert.equal(typeof response.body.error, "string");
    });

    test("GET /api/openapi.json describes every operation, without credentials", async () => {
      const response = await call(url(), "GET", "/api/openapi.json");
      assert.equal(response.status, 200);
      assert.equal(response.body.openapi, "3.1.0");
      assert.equal(response.body.info.version, "0.0.1");
      assert.deepEqual(Object.keys(response.body.components.securitySchemes).sort(), ["ApiKeyAuth", "ApiSecretAuth"]);
      assert.ok(response.body.paths["/api/client/database-users/{id}/databases/{database_id}"].delete);
      assert.ok(response.body.paths["/api/metrics/clear-cache"].post.requestBody);
      // Every 422 carries `errors` (DESIGN.md "HTTP contract"); the document says so.
      const validation = response.body.paths["/api/client/databases"].post.responses["422"];
      assert.equal(validation.content["application/json"].schema.$ref, "#/components/schemas/ValidationError");
      assert.deepEqual(response.body.components.schemas.ValidationError.required, ["error", "errors"]);
      // SPEC.md "DNS records": type is one of A, AAAA, CNAME, MX, TXT, SRV, NS (SOA is answered 403).
      const types = ["A", "AAAA", "CNAME", "MX", "TXT", "SRV", "NS"];
      const dns = response.body.paths["/api/client/dns-records"].post.requestBody.content["application/json"].schema;
      assert.deepEqual(dns.properties.type.enum, types);
      const dnsUpdate = response.body.paths["/api/client/dns-records/{id}"].put.requestBody.content["application/json"].schema;
      assert.deepEqual(dnsUpdate.properties.type.enum, types);
      // usage-details says when its disk figure was measured (a figure is kept up to DISK_USAGE_MAX_AGE_S).
      const usage = response.body.paths["/api/client/account/usage-details"].get.responses["200"].content["application/json"].schema;
      const disk = usage.properties?.disk ?? response.body.components.schemas[usage.$ref?.split("/").at(-1)]?.properties.disk;
      assert.ok(disk.required.includes("measured_at"), JSON.stringify(disk));
      assert.ok(JSON.stringify(disk.properties.measured_at).includes("date-time"), JSON.stringify(disk.properties.measured_at));
    });

  });

  describe(`authentication behind a trusted proxy (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    before(async () => {
      env = await createEnvironment(backend, seed, { TRUSTED_PROXIES: "127.0.0.1/32, ::1" });
    });
    after(async () => {
      await env?.teardown();
    });

    test("X-Forwarded-For from a trusted proxy is believed; hops a client added before it are not", async () => {
      const forwarded = (xff: string) =>
        call(env.server.baseUrl, "GET", "/api/client/account", {
          credentials: env.seed.remoteOnlyKey,
          account: "alice",
          headers: { "x-forwarded-for": xff },
        });
      assert.equal((await forwarded("203.0.113.7")).status, 200);
      assert.equal((await forwarded("2001:db8::5")).status, 200);
      assert.equal((await forwarded("203.0.113.7, 198.51.100.1")).status, 403, "the proxy saw 198.51.100.1");
      assert.equal((await call(env.server.baseUrl, "GET", "/api/client/account", {
        credentials: env.seed.remoteOnlyKey,
        account: "alice",
      })).status, 403, "no header: the proxy's own address");
    });
  });
}
