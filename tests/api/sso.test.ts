import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { and, eq, sql } from "drizzle-orm";
import type { Database } from "@/db/client";
import { auditLog, ssoTokens } from "@/db/schema";
import { createAdminUser } from "@/lib/admins/service";
import { createApiKey } from "@/lib/api-keys/service";
import { sha256Hex } from "@/lib/api-keys/tokens";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedTenants } from "../support/seed";

// POST /api/admin/generate-sso-token and GET /sso over HTTP: the link signs the key's admin in
// once, within 60 s; a used, expired or unknown token signs nobody in.

async function seed(db: Database) {
  const tenants = await seedTenants(db);
  const firstsKey = await createApiKey(db, { name: "made by the first admin", scope: "admin" }, { type: "admin_user", id: tenants.admin.id });
  const second = await createAdminUser(db, { email: "second@example.com", password: "another long password" }, { type: "system" });
  const secondsKey = await createApiKey(db, { name: "made by second", scope: "admin" }, { type: "admin_user", id: second.id });
  return {
    ...tenants,
    second,
    firstsKey: { id: firstsKey.id, key: firstsKey.key, secret: firstsKey.secret },
    secondsKey: { key: secondsKey.key, secret: secondsKey.secret },
  };
}

/** Follows nothing: the SSO answer itself (redirect or refusal page). */
const visit = (url: string, cookie?: string) =>
  fetch(url, { redirect: "manual", headers: cookie ? { cookie } : {} });

const sessionCookieOf = (response: Response) => {
  const cookie = response.headers.getSetCookie().find((value) => value.startsWith("next-auth.session-token="));
  return cookie?.split(";")[0];
};

async function sessionEmail(baseUrl: string, cookie: string | undefined): Promise<string | null> {
  const response = await fetch(`${baseUrl}/api/auth/session`, { headers: cookie ? { cookie } : {} });
  const body = (await response.json()) as { user?: { email?: string } };
  return body.user?.email ?? null;
}

for (const backend of testBackends()) {
  describe(`single sign-on (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const base = () => env.server.baseUrl;
    // Links point at PUBLIC_URL, which test servers set to their own address.

    before(async () => {
      env = await createEnvironment(backend, seed);
    });
    after(async () => {
      await env?.teardown();
    });

    test("an admin's key gets a link for that admin; the link works once and starts a session", async () => {
      const response = await apiClient(base(), env.seed.firstsKey).post("/api/admin/generate-sso-token");
      assert.equal(response.status, 200);
      const { sso_url, redirect_url, token } = response.body;
      const publicUrl = base();
      assert.equal(sso_url, `${publicUrl}/sso?token=${token}`);
      assert.equal(redirect_url, `${publicUrl}/admin`);
      assert.match(token, /^[0-9A-Za-z]{43}$/);

      const first = await visit(sso_url);
      assert.equal(first.status, 303);
      assert.equal(first.headers.get("location"), redirect_url);
      const cookie = sessionCookieOf(first);
      assert.ok(cookie, "a session cookie is set");
      assert.equal(await sessionEmail(base(), cookie), "admin@example.com");
      assert.equal(await sessionEmail(base(), undefined), null, "no cookie, no session");

      const second = await visit(sso_url);
      assert.equal(second.status, 410);
      assert.equal(sessionCookieOf(second), undefined);
      assert.match(await second.text(), /already been used/);
    });

    test("a key made by another admin signs that admin in, not the first", async () => {
      const response = await apiClient(base(), env.seed.secondsKey).post("/api/admin/generate-sso-token");
      assert.equal(response.status, 200);
      const signedIn = await visit(response.body.sso_url);
      assert.equal(signedIn.status, 303);
      assert.equal(await sessionEmail(base(), sessionCookieOf(signedIn)), "second@example.com");
    });

    test("a key made on the command line without --owner belongs to no admin: no link (403)", async () => {
      const response = await apiClient(base(), env.seed.adminKey).post("/api/admin/generate-sso-token");
      assert.equal(response.status, 403);
      assert.match(response.body.error, /belongs to no admin/);
    });

    test("an unknown or missing token signs nobody in (401 page)", async () => {
      for (const path of ["/sso?token=notARealToken", "/sso"]) {
        const response = await visit(`${base()}${path}`);
        assert.equal(response.status, 401, path);
        assert.match(response.headers.get("content-type") ?? "", /text\/html/);
        assert.equal(sessionCookieOf(response), undefined);
      }
    });

    if (backend === "postgres") {
      // Changing rows beside the running server needs a second connection: PostgreSQL only.
      test("an expired token signs nobody in (410 page)", async () => {
        const response = await apiClient(base(), env.seed.firstsKey).post("/api/admin/generate-sso-token");
        await env.db!
          .update(ssoTokens)
          .set({ expiresAt: sql`now() - interval '1 second'` })
          .where(eq(ssoTokens.tokenHash, sha256Hex(response.body.token)));
        const refused = await visit(response.body.sso_url);
        assert.equal(refused.status, 410);
        assert.match(await refused.text(), /expired/);
        assert.equal(sessionCookieOf(refused), undefined);
      });

      test("the token is stored hashed, expires 60 s after creation, and its creation is audited with key and address", async () => {
        const response = await apiClient(base(), env.seed.firstsKey).post("/api/admin/generate-sso-token");
        const db = env.db!;
        const [row] = await db.select().from(ssoTokens).where(eq(ssoTokens.tokenHash, sha256Hex(response.body.token)));
        assert.ok(row, "found by hash");
        assert.equal(row.usedAt, null);
        assert.equal(row.expiresAt.getTime() - row.createdAt.getTime(), 60_000);
        assert.equal(row.apiKeyId, env.seed.firstsKey.id);
        const [audit] = await db
          .select()
          .from(auditLog)
          .where(and(eq(auditLog.action, "sso_token.create"), sql`${auditLog.details}->>'sso_token_id' = ${String(row.id)}`));
        assert.equal(audit.actorType, "api_key");
        assert.equal(audit.actorId, env.seed.firstsKey.id);
        assert.equal(audit.ip, "127.0.0.1");
        assert.equal(audit.targetId, env.seed.admin.id);
      });
    }
  });

  describe(`single sign-on without any admin (${backend})`, () => {
    let env: TestEnvironment<{ key: { key: string; secret: string } }>;
    before(async () => {
      env = await createEnvironment(backend, async (db) => ({ key: await makeKey(db, { scope: "admin" }) }));
    });
    after(async () => {
      await env?.teardown();
    });

    test("403: a key made before any admin belongs to none, so it signs nobody in", async () => {
      const response = await apiClient(env.server.baseUrl, env.seed.key).post("/api/admin/generate-sso-token");
      assert.equal(response.status, 403);
      assert.match(response.body.error, /belongs to no admin/);
    });
  });
}
