import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { and, eq, inArray } from "drizzle-orm";
import type { Database } from "@/db/client";
import { auditLog } from "@/db/schema";
import { accountLifecycleOperations } from "@/lib/accounts/operations";
import { createAccount } from "@/lib/accounts/service";
import { endpointOf, type Operation } from "@/lib/http/operation";
import { createPlan } from "@/lib/plans/service";
import { createReseller } from "@/lib/resellers/service";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { type ApiResponse, type Credentials, call } from "../support/http";
import { makeKey, seedActor, seedTenants } from "../support/seed";

// The account lifecycle API (DESIGN.md "Account lifecycle API"): every operation × every kind of
// caller — admin key, reseller key on its own and on a foreign account, account key, a key whose
// endpoint list leaves the operation out — then the lifecycle itself and Idempotency-Key, retries
// sequential and concurrent.
//
// The cast (seedTenants): reseller res1 owns alice, bob has no reseller; res2 owns erin.

const MISSING = 2147483647;
const operations: readonly Operation[] = Object.values(accountLifecycleOperations);

async function seed(db: Database) {
  const tenants = await seedTenants(db);
  await createPlan(db, { name: "gold", max_databases: 5 }, seedActor);
  const res2 = await createReseller(db, { username: "res2" }, seedActor);
  const erin = await createAccount(db, { username: "erin", domain: "erin.example", reseller: "res2" }, seedActor);
  return {
    ...tenants,
    erin,
    res2Key: await makeKey(db, { scope: "reseller", reseller_id: res2.id }),
    // An admin key that may only list plans.
    plansOnlyKey: await makeKey(db, { scope: "admin", allow_all_endpoints: false, allowed_endpoints: ["GET /api/admin/plans"] }),
  };
}
type Seed = Awaited<ReturnType<typeof seed>>;

/** A request that would succeed for a caller that may make it (bodies valid, nothing conflicting). */
function requestFor(operation: Operation, id: number): { method: string; path: string; body?: unknown } {
  const path = operation.path.replace("{id}", String(id));
  if (operation === accountLifecycleOperations.create) {
    return { method: "POST", path, body: { username: `n${id % 100000}`, domain: `n${id % 100000}.example` } };
  }
  if (operation === accountLifecycleOperations.update) return { method: "PUT", path, body: { company: "Changed Ltd" } };
  if (operation === accountLifecycleOperations.suspend) return { method: "POST", path, body: { reason: "unpaid" } };
  return { method: operation.method, path };
}

for (const backend of testBackends()) {
  describe(`account lifecycle API (${backend})`, () => {
    let env: TestEnvironment<Seed>;
    const as = (credentials: Credentials) => ({
      get: (path: string) => call(env.server.baseUrl, "GET", path, { credentials }),
      post: (path: string, body?: unknown, headers?: Record<string, string>) =>
        call(env.server.baseUrl, "POST", path, { credentials, body, headers }),
      put: (path: string, body: unknown) => call(env.server.baseUrl, "PUT", path, { credentials, body }),
      delete: (path: string) => call(env.server.baseUrl, "DELETE", path, { credentials }),
    });
    const send = (credentials: Credentials, request: ReturnType<typeof requestFor>) =>
      call(env.server.baseUrl, request.method, request.path, { credentials, body: request.body });

    before(async () => {
      env = await createEnvironment(backend, seed);
    });
    after(async () => {
      await env?.teardown();
    });

    test("OpenAPI lists the eight operations; create, suspend and unsuspend document Idempotency-Key", async () => {
      const document = (await call(env.server.baseUrl, "GET", "/api/openapi.json")).body;
      for (const operation of operations) {
        const declared = document.paths[operation.path]?.[operation.method.toLowerCase()];
        assert.ok(declared, `${endpointOf(operation)} is in the document`);
        const headers = declared.parameters.map((parameter: { name: string }) => parameter.name);
        assert.equal(headers.includes("Idempotency-Key"), operation.idempotent === true, endpointOf(operation));
      }
      assert.equal(operations.length, 8);
      const wrongMethod = await call(env.server.baseUrl, "PATCH", "/api/admin/accounts/1");
      assert.equal(wrongMethod.status, 405);
      assert.equal(wrongMethod.headers.get("allow"), "GET, PUT, DELETE, HEAD");
    });

    test("an account key is refused every operation with 403, even on its own account", async () => {
      for (const operation of operations) {
        const response = await send(env.seed.aliceKey, requestFor(operation, env.seed.alice.id));
        assert.equal(response.status, 403, endpointOf(operation));
        assert.deepEqual(response.body, { error: "This operation needs an admin or reseller API key" });
      }
    });

    test("a key restricted to GET /api/admin/plans gets 403 on the seven others and 200 on it", async () => {
      for (const operation of operations) {
        const response = await send(env.seed.plansOnlyKey, requestFor(operation, env.seed.alice.id));
        if (operation === accountLifecycleOperations.plans) {
          assert.equal(response.status, 200);
          assert.deepEqual(response.body.map((plan: { name: string }) => plan.name).sort(), ["default", "gold"]);
        } else {
          assert.equal(response.status, 403, endpointOf(operation));
          assert.match(response.body.error, /may not call/);
        }
      }
    });

    test("a reseller key: another's account and a missing one get the same 404 on every {id} operation; nothing changes", async () => {
      const admin = as(env.seed.adminKey);
      const foreignBefore = await Promise.all([env.seed.bob.id, env.seed.erin.id].map((id) => admin.get(`/api/admin/accounts/${id}`)));
      for (const operation of operations.filter((candidate) => candidate.path.includes("{id}"))) {
        const missing = await send(env.seed.resellerKey, requestFor(operation, MISSING));
        assert.equal(missing.status, 404, endpointOf(operation));
        assert.deepEqual(missing.body, { error: "Hosting account not found" });
        for (const foreign of [env.seed.bob, env.seed.erin]) {
          const response = await send(env.seed.resellerKey, requestFor(operation, foreign.id));
          assert.deepEqual([response.status, response.body], [missing.status, missing.body], `${endpointOf(operation)} on ${foreign.username}`);
        }
      }
      const foreignAfter = await Promise.all([env.seed.bob.id, env.seed.erin.id].map((id) => admin.get(`/api/admin/accounts/${id}`)));
      assert.deepEqual(foreignAfter.map((response) => response.body), foreignBefore.map((response) => response.body));
      const list = await as(env.seed.resellerKey).get("/api/admin/accounts");
      assert.deepEqual(list.body.map((account: { username: string }) => account.username), ["alice"]);
    });

    test("a reseller key runs the whole lifecycle on its own accounts; what it creates is its own", async () => {
      const reseller = as(env.seed.resellerKey);
      const refused = await reseller.post("/api/admin/accounts", { username: "rcust", domain: "rcust.example", reseller: "res2" });
      assert.equal(refused.status, 422);
      assert.deepEqual(Object.keys(refused.body.errors), ["reseller"]);

      const created = await reseller.post("/api/admin/accounts", { username: "rcust", domain: "rcust.example", plan: "gold", city: "Lyon" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.reseller_id, env.seed.reseller.id);
      assert.equal(created.body.city, "Lyon");
      assert.equal(created.body.plan.name, "gold");
      const id = created.body.id;
      const list = await reseller.get("/api/admin/accounts");
      assert.deepEqual(list.body.map((account: { username: string }) => account.username), ["alice", "rcust"]);
      assert.equal((await as(env.seed.res2Key).get(`/api/admin/accounts/${id}`)).status, 404, "another reseller cannot see it");

      const changed = await reseller.put(`/api/admin/accounts/${id}`, { plan: "default", email: "billing@rcust.example" });
      assert.equal(changed.status, 200);
      assert.equal(changed.body.plan.name, "default");
      assert.equal(changed.body.email, "billing@rcust.example");
      const moved = await reseller.put(`/api/admin/accounts/${id}`, { reseller: null });
      assert.equal(moved.status, 422);
      assert.deepEqual(Object.keys(moved.body.errors), ["reseller"]);

      const suspended = await reseller.post(`/api/admin/accounts/${id}/suspend`, { reason: "unpaid" });
      assert.equal(suspended.status, 200);
      assert.equal(suspended.body.status, "suspended");
      const unsuspended = await reseller.post(`/api/admin/accounts/${id}/unsuspend`);
      assert.equal(unsuspended.status, 200);
      assert.equal(unsuspended.body.status, "active");
      const terminated = await reseller.delete(`/api/admin/accounts/${id}`);
      assert.deepEqual([terminated.status, terminated.body], [200, { message: "Hosting account rcust terminated" }]);
      assert.equal((await reseller.get(`/api/admin/accounts/${id}`)).status, 404);
    });

    test("create refuses reserved names, taken names and domains, unknown plans: 422 naming the field", async () => {
      const admin = as(env.seed.adminKey);
      const fieldOf = async (body: object) => {
        const response = await admin.post("/api/admin/accounts", body);
        assert.equal(response.status, 422, JSON.stringify(response.body));
        return Object.keys(response.body.errors);
      };
      for (const reserved of ["root", "mysql", "postgres", "nginx", "www-data", "Daemon"]) {
        assert.deepEqual(await fieldOf({ username: reserved, domain: "reserved.example" }), ["username"], reserved);
      }
      // A Linux user of this machine that is on no fixed list.
      const passwdUser = fs
        .readFileSync("/etc/passwd", "utf8")
        .split("\n")
        .map((line) => line.split(":")[0])
        .find((name) => /^[a-z][a-z0-9_]{0,31}$/.test(name) && !["root", "daemon", "bin", "sys", "mysql", "postgres"].includes(name));
      if (passwdUser) assert.deepEqual(await fieldOf({ username: passwdUser, domain: "sysuser.example" }), ["username"], passwdUser);
      assert.deepEqual(await fieldOf({ username: "alice", domain: "other.example" }), ["username"]);
      assert.deepEqual(await fieldOf({ username: "newbie", domain: "alice.example" }), ["domain"]);
      assert.deepEqual(await fieldOf({ username: "newbie", domain: "newbie.example", plan: "platinum" }), ["plan"]);
      assert.deepEqual(await fieldOf({ username: "newbie", domain: "newbie.example", reseller: "nobody" }), ["reseller"]);
      assert.equal((await admin.get("/api/admin/accounts?search=newbie")).body.length, 0, "nothing was created");
      const malformed = await call(env.server.baseUrl, "POST", "/api/admin/accounts", { credentials: env.seed.adminKey, rawBody: "{" });
      assert.equal(malformed.status, 400);
    });

    test("admin key: list searches and filters; get; update refuses username, domain and status; suspend and unsuspend are idempotent", async () => {
      const admin = as(env.seed.adminKey);
      const all = await admin.get("/api/admin/accounts");
      assert.deepEqual(all.body.map((account: { username: string }) => account.username), ["alice", "bob", "erin"]);
      assert.deepEqual((await admin.get("/api/admin/accounts?search=BOB.EX")).body.map((a: { username: string }) => a.username), ["bob"]);
      assert.deepEqual((await admin.get("/api/admin/accounts?status=suspended")).body, []);
      assert.equal((await admin.get("/api/admin/accounts?status=gone")).status, 422);
      assert.equal((await admin.get("/api/admin/accounts/abc")).status, 404);

      const bob = `/api/admin/accounts/${env.seed.bob.id}`;
      for (const field of ["username", "domain", "status", "is_suspended"]) {
        const response = await admin.put(bob, { [field]: field === "is_suspended" ? true : "x", company: "Never" });
        assert.equal(response.status, 422, field);
        assert.deepEqual(Object.keys(response.body.errors), [field]);
      }
      assert.equal((await admin.get(bob)).body.company, null, "a refused update changes nothing");
      const updated = await admin.put(bob, { has_ssh_access: true, plan: "gold", reseller: "res1" });
      assert.equal(updated.status, 200);
      assert.deepEqual([updated.body.has_ssh_access, updated.body.plan.name, updated.body.reseller_id], [true, "gold", env.seed.reseller.id]);
      assert.equal((await as(env.seed.resellerKey).get(bob)).status, 200, "moved to res1, res1's key reaches bob");
      await admin.put(bob, { reseller: null });
      assert.equal((await as(env.seed.resellerKey).get(bob)).status, 404);

      const tooLong = await admin.post(`${bob}/suspend`, { reason: "x".repeat(256) });
      assert.equal(tooLong.status, 422);
      assert.deepEqual(Object.keys(tooLong.body.errors), ["reason"]);
      const suspended = await admin.post(`${bob}/suspend`, { reason: "Invoice 7 unpaid" });
      assert.equal(suspended.status, 200);
      assert.deepEqual([suspended.body.status, suspended.body.is_suspended, suspended.body.suspension_reason], ["suspended", true, "Invoice 7 unpaid"]);
      const again = await admin.post(`${bob}/suspend`, { reason: "another reason" });
      assert.deepEqual([again.status, again.body], [200, suspended.body], "suspending a suspended account changes nothing");
      assert.equal((await call(env.server.baseUrl, "GET", "/api/client/account", { credentials: env.seed.bobKey })).status, 403);
      assert.equal((await call(env.server.baseUrl, "GET", "/api/client/account", { credentials: env.seed.adminKey, account: "bob" })).status, 200);
      assert.deepEqual((await admin.get("/api/admin/accounts?status=suspended")).body.map((a: { username: string }) => a.username), ["bob"]);

      const active = await admin.post(`${bob}/unsuspend`);
      assert.deepEqual([active.status, active.body.status, active.body.suspension_reason], [200, "active", null]);
      const activeAgain = await admin.post(`${bob}/unsuspend`);
      assert.deepEqual([activeAgain.status, activeAgain.body], [200, active.body]);
      assert.equal((await call(env.server.baseUrl, "GET", "/api/client/account", { credentials: env.seed.bobKey })).status, 200);
    });

    test("terminate removes the zone files, domains, databases, users and the account's keys; then 404", async () => {
      const admin = as(env.seed.adminKey);
      const created = await admin.post("/api/admin/accounts", { username: "gone", domain: "gone.example" });
      assert.equal(created.status, 201);
      const id = created.body.id;
      const acting = (method: string, path: string, body?: unknown) =>
        call(env.server.baseUrl, method, path, { credentials: env.seed.adminKey, account: "gone", body });
      const sub = await acting("POST", "/api/client/domains", { domain: "blog.gone.example", domain_type: "subdomain", parent_domain_id: (await acting("GET", "/api/client/domains")).body[0].id });
      assert.equal(sub.status, 201, JSON.stringify(sub.body));
      assert.equal((await acting("POST", "/api/client/databases", { database_name: "shop" })).status, 201);
      assert.equal((await acting("POST", "/api/client/database-users", { username: "app", password: "pass-w0rd-long" })).status, 201);
      const zonesDir = env.database.env.ZONES_DIR;
      assert.ok(fs.existsSync(path.join(zonesDir, "gone.example.zone")));
      const taken = await admin.post("/api/admin/accounts", { username: "gone", domain: "gone2.example" });
      assert.equal(taken.status, 422, "a username is taken while its account exists");

      const terminated = await admin.delete(`/api/admin/accounts/${id}`);
      assert.deepEqual([terminated.status, terminated.body], [200, { message: "Hosting account gone terminated" }]);
      assert.equal(fs.existsSync(path.join(zonesDir, "gone.example.zone")), false);
      assert.equal(fs.existsSync(path.join(zonesDir, "blog.gone.example.zone")), false);
      assert.equal((await admin.get(`/api/admin/accounts/${id}`)).status, 404);
      assert.equal((await admin.delete(`/api/admin/accounts/${id}`)).status, 404);
      assert.equal((await acting("GET", "/api/client/domains")).status, 404);
      // Its names are free again: a new account may take them.
      const reborn = await admin.post("/api/admin/accounts", { username: "gone", domain: "gone.example" });
      assert.equal(reborn.status, 201);
      assert.equal((await admin.delete(`/api/admin/accounts/${reborn.body.id}`)).status, 200);

      if (env.db) {
        const actions = await env.db
          .select({ action: auditLog.action, actorType: auditLog.actorType })
          .from(auditLog)
          .where(and(eq(auditLog.targetId, id), inArray(auditLog.action, ["hosting_account.create", "hosting_account.terminate"])));
        assert.deepEqual(actions.map((row) => row.action).sort(), ["hosting_account.create", "hosting_account.terminate"]);
        assert.ok(actions.every((row) => row.actorType === "api_key"));
      }
    });

    test("terminating an account deletes its own API keys", async () => {
      const admin = as(env.seed.adminKey);
      const id = env.seed.alice.id;
      assert.equal((await call(env.server.baseUrl, "GET", "/api/client/account", { credentials: env.seed.aliceKey })).status, 200);
      assert.equal((await as(env.seed.resellerKey).delete(`/api/admin/accounts/${id}`)).status, 200);
      assert.equal((await call(env.server.baseUrl, "GET", "/api/client/account", { credentials: env.seed.aliceKey })).status, 401);
      assert.equal((await admin.get(`/api/admin/accounts/${id}`)).status, 404);
    });

    describe("Idempotency-Key", () => {
      const withKey = (credentials: Credentials, path: string, body: unknown, key: string) =>
        call(env.server.baseUrl, "POST", path, { credentials, body, headers: { "idempotency-key": key } });

      test("a retry with the same key and body answers exactly the first answer and creates nothing", async () => {
        const body = { username: "retry1", domain: "retry1.example", plan: "gold" };
        const first = await withKey(env.seed.adminKey, "/api/admin/accounts", body, "order-1001");
        assert.equal(first.status, 201);
        assert.equal(first.headers.get("idempotent-replayed"), null);
        const retry = await withKey(env.seed.adminKey, "/api/admin/accounts", body, "order-1001");
        assert.deepEqual([retry.status, retry.body], [first.status, first.body]);
        assert.equal(retry.headers.get("idempotent-replayed"), "true");
        const list = await as(env.seed.adminKey).get("/api/admin/accounts?search=retry1");
        assert.equal(list.body.length, 1);

        const different = await withKey(env.seed.adminKey, "/api/admin/accounts", { ...body, plan: "default" }, "order-1001");
        assert.equal(different.status, 422);
        assert.deepEqual(Object.keys(different.body.errors), ["Idempotency-Key"]);
        // Keys belong to one API key: another key's same value is a new request.
        const otherKey = await withKey(env.seed.resellerKey, "/api/admin/accounts", { username: "retry2", domain: "retry2.example" }, "order-1001");
        assert.equal(otherKey.status, 201);

        const tooLong = await withKey(env.seed.adminKey, "/api/admin/accounts", body, "k".repeat(256));
        assert.equal(tooLong.status, 422);
        assert.deepEqual(Object.keys(tooLong.body.errors), ["Idempotency-Key"]);
      });

      test("a first answer that was a refusal is replayed too; suspend and unsuspend honour keys per path", async () => {
        const taken = { username: "bob", domain: "elsewhere.example" };
        const refused = await withKey(env.seed.adminKey, "/api/admin/accounts", taken, "order-2002");
        assert.equal(refused.status, 422);
        const replay = await withKey(env.seed.adminKey, "/api/admin/accounts", taken, "order-2002");
        assert.deepEqual([replay.status, replay.body, replay.headers.get("idempotent-replayed")], [422, refused.body, "true"]);

        const bob = `/api/admin/accounts/${env.seed.bob.id}`;
        const suspended = await withKey(env.seed.adminKey, `${bob}/suspend`, { reason: "late" }, "suspend-bob-1");
        assert.equal(suspended.status, 200);
        await as(env.seed.adminKey).post(`${bob}/unsuspend`);
        const retried = await withKey(env.seed.adminKey, `${bob}/suspend`, { reason: "late" }, "suspend-bob-1");
        assert.deepEqual([retried.status, retried.body], [200, suspended.body], "the first answer, not a new suspension");
        assert.equal((await as(env.seed.adminKey).get(bob)).body.status, "active");
        const otherPath = await withKey(env.seed.adminKey, `${bob}/unsuspend`, undefined, "suspend-bob-1");
        assert.equal(otherPath.status, 422);
      });

      test("concurrent retries with one key make one account and all get the first answer", async () => {
        const body = { username: "burst", domain: "burst.example" };
        const answers: ApiResponse[] = await Promise.all(
          Array.from({ length: 12 }, () => withKey(env.seed.adminKey, "/api/admin/accounts", body, "order-burst")),
        );
        for (const answer of answers) assert.deepEqual([answer.status, answer.body], [201, answers[0].body]);
        assert.equal(answers.filter((answer) => answer.headers.get("idempotent-replayed") === null).length, 1, "one request ran");
        const list = await as(env.seed.adminKey).get("/api/admin/accounts?search=burst");
        assert.equal(list.body.length, 1);
      });
    });
  });
}
