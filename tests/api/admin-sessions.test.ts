import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import { encode } from "next-auth/jwt";
import type { Database } from "@/db/client";
import { adminUsers } from "@/db/schema";
import { getAuthSecret } from "@/lib/admins/auth-secret";
import { createAdminUser, setAdminEnabled } from "@/lib/admins/service";
import { testBackends } from "../support/database";
import { PANEL_SCRIPT } from "../support/cli";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { startServer, type TestServer } from "../support/server";
import { makeKey, seedActor, seedTenants } from "../support/seed";

// DESIGN.md "Nothing without a session", over HTTP: a session cookie copied before sign-out, a
// password change, disabling or deleting the admin is refused on the very next request, on every
// instance sharing the database; a session lasts 12 h from sign-in at most. And the headers every
// response carries.

const PASSWORD = "correct horse battery";

async function seed(db: Database) {
  const tenants = await seedTenants(db);
  const other = await createAdminUser(db, { email: "other@example.com", password: "other long password" }, seedActor);
  const adminsOwnKey = await makeKey(db, { scope: "admin" }, { type: "admin_user", id: tenants.admin.id });
  return { ...tenants, other, adminsOwnKey };
}
type Seed = Awaited<ReturnType<typeof seed>>;

const cookiesOf = (response: Response) => response.headers.getSetCookie().map((cookie) => cookie.split(";")[0]);

/** Signs in through next-auth's credentials form, as the login page does. */
async function signIn(baseUrl: string, email: string, password: string) {
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const csrfCookie = cookiesOf(csrf).join("; ");
  const response = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie },
    body: new URLSearchParams({ csrfToken, email, password, json: "true" }),
  });
  const setCookie = response.headers.getSetCookie().find((cookie) => cookie.includes("next-auth.session-token="));
  assert.ok(setCookie, `signed in as ${email}`);
  return { cookie: setCookie.split(";")[0], setCookie, csrfToken, csrfCookie };
}

async function signOut(baseUrl: string, session: Awaited<ReturnType<typeof signIn>>) {
  const response = await fetch(`${baseUrl}/api/auth/signout`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: `${session.csrfCookie}; ${session.cookie}` },
    body: new URLSearchParams({ csrfToken: session.csrfToken, json: "true" }),
  });
  assert.ok(response.status < 400, `sign-out answered ${response.status}`);
}

/** Whether `cookie` opens an admin page on `baseUrl` (the page itself, or a redirect to sign in). */
async function opensAdmin(baseUrl: string, cookie: string): Promise<boolean> {
  const response = await fetch(`${baseUrl}/admin/settings/api-keys`, { redirect: "manual", headers: { cookie } });
  const body = await response.text();
  if (response.status === 200) return true;
  assert.equal(response.status, 307);
  assert.equal(new URL(response.headers.get("location")!, baseUrl).pathname, "/login");
  assert.doesNotMatch(body, /hcp_/, "a refused request carries no key");
  return false;
}

async function sessionEmail(baseUrl: string, cookie: string): Promise<string | null> {
  const response = await fetch(`${baseUrl}/api/auth/session`, { headers: { cookie } });
  return ((await response.json()) as { user?: { email?: string } }).user?.email ?? null;
}

function panel(env: Record<string, string>, ...args: string[]) {
  // As `npm run panel` runs it.
  const child = spawn(process.execPath, [PANEL_SCRIPT, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  return new Promise<{ code: number; output: string }>((resolve) => child.on("close", (code) => resolve({ code: code ?? 1, output })));
}

function assertSecurityHeaders(response: Response, what: string) {
  assert.equal(response.headers.get("x-content-type-options"), "nosniff", what);
  assert.equal(response.headers.get("x-frame-options"), "DENY", what);
  assert.match(response.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/, what);
}

for (const backend of testBackends()) {
  describe(`admin sessions and security headers (${backend})`, () => {
    let env: TestEnvironment<Seed>;
    const base = () => env.server.baseUrl;

    before(async () => {
      env = await createEnvironment(backend, seed);
    });
    after(async () => {
      await env?.teardown();
    });

    test("a cookie copied before sign-out is refused afterwards; signing in again works", async () => {
      const session = await signIn(base(), "admin@example.com", PASSWORD);
      assert.equal(await opensAdmin(base(), session.cookie), true);
      assert.equal(await sessionEmail(base(), session.cookie), "admin@example.com");
      await signOut(base(), session);
      assert.equal(await opensAdmin(base(), session.cookie), false);
      assert.equal(await sessionEmail(base(), session.cookie), null);
      const again = await signIn(base(), "admin@example.com", PASSWORD);
      assert.equal(await opensAdmin(base(), again.cookie), true);
    });

    test("the session cookie is HttpOnly and SameSite=Lax (not Secure over http)", async () => {
      const { setCookie } = await signIn(base(), "admin@example.com", PASSWORD);
      assert.match(setCookie, /;\s*HttpOnly/i);
      assert.match(setCookie, /;\s*SameSite=Lax/i);
      assert.doesNotMatch(setCookie, /;\s*Secure/i);
      assert.match(setCookie, /^next-auth\.session-token=/);
    });

    test("pages, API answers and the server's own 404 carry the security headers", async () => {
      for (const pagePath of ["/login", "/admin", "/admin/accounts?page=2"]) {
        const response = await fetch(`${base()}${pagePath}`, { redirect: "manual" });
        assertSecurityHeaders(response, pagePath);
        assert.equal(response.headers.get("referrer-policy"), "same-origin", pagePath);
        assert.match(response.headers.get("content-security-policy")!, /default-src 'self'/, pagePath);
      }
      for (const oneTimePath of ["/sso?token=nothing", "/setup?token=nothing"]) {
        const response = await fetch(`${base()}${oneTimePath}`, { redirect: "manual" });
        assertSecurityHeaders(response, oneTimePath);
        assert.equal(response.headers.get("referrer-policy"), "no-referrer", oneTimePath);
      }
      const api = apiClient(base(), env.seed.adminKey);
      const answers = [
        ["GET /api/metrics/history", await fetch(`${base()}/api/metrics/history`, { headers: { "x-api-key": env.seed.adminKey.key, "x-api-secret": env.seed.adminKey.secret } })],
        ["401", await fetch(`${base()}/api/metrics/history`)],
        ["404 of server.ts", await fetch(`${base()}/api/no-such-thing`)],
        ["405 of server.ts", await fetch(`${base()}/api/metrics/history`, { method: "PATCH" })],
      ] as const;
      assert.equal(answers[0][1].status, 200);
      assert.equal((await api.post("/api/admin/generate-sso-token")).headers.get("cache-control"), "no-store");
      for (const [what, response] of answers) {
        assertSecurityHeaders(response, what);
        assert.equal(response.headers.get("cache-control"), "no-store", what);
        assert.equal(response.headers.get("strict-transport-security"), null, `${what}: no HSTS over http`);
      }
    });

    if (backend !== "postgres") return;

    // PostgreSQL: a second instance on the same database, and changes made beside both servers.
    describe("two instances on one database", () => {
      let second: TestServer;
      const db = () => env.db!;

      before(async () => {
        second = await startServer(env.database.env);
      });
      after(async () => {
        await second?.stop();
      });

      test("sign-out on one instance ends the session on the other", async () => {
        const session = await signIn(base(), "other@example.com", "other long password");
        assert.equal(await opensAdmin(second.baseUrl, session.cookie), true, "a session works on every instance");
        await signOut(base(), session);
        assert.equal(await opensAdmin(second.baseUrl, session.cookie), false);
      });

      test("disabling the admin ends their sessions everywhere, and enabling does not revive them", async () => {
        const session = await signIn(second.baseUrl, "other@example.com", "other long password");
        assert.equal(await opensAdmin(base(), session.cookie), true);
        await setAdminEnabled(db(), env.seed.other.id, false, seedActor);
        assert.equal(await opensAdmin(base(), session.cookie), false);
        assert.equal(await opensAdmin(second.baseUrl, session.cookie), false);
        await setAdminEnabled(db(), env.seed.other.id, true, seedActor);
        assert.equal(await opensAdmin(base(), session.cookie), false);
      });

      test("a password change on the command line ends the admin's sessions everywhere", async () => {
        const session = await signIn(base(), "other@example.com", "other long password");
        assert.equal(await opensAdmin(second.baseUrl, session.cookie), true);
        const changed = await panel(env.database.env, "admin", "password", "--email", "other@example.com", "--password", "a new long password", "--json");
        assert.equal(changed.code, 0, changed.output);
        assert.equal(await opensAdmin(base(), session.cookie), false);
        assert.equal(await opensAdmin(second.baseUrl, session.cookie), false);
        const renewed = await signIn(second.baseUrl, "other@example.com", "a new long password");
        assert.equal(await opensAdmin(base(), renewed.cookie), true);
      });

      test("a deleted admin's session ends", async () => {
        const doomed = await createAdminUser(db(), { email: "doomed@example.com", password: "doomed long password" }, seedActor);
        const session = await signIn(base(), "doomed@example.com", "doomed long password");
        assert.equal(await opensAdmin(second.baseUrl, session.cookie), true);
        await db().delete(adminUsers).where(eq(adminUsers.id, doomed.id));
        assert.equal(await opensAdmin(base(), session.cookie), false);
        assert.equal(await opensAdmin(second.baseUrl, session.cookie), false);
      });

      test("a session lasts 12 h from sign-in, however often it is refreshed", async () => {
        const secret = await getAuthSecret(db());
        const [admin] = await db().select().from(adminUsers).where(eq(adminUsers.email, "admin@example.com"));
        const tokenSignedInAt = (secondsAgo: number) =>
          encode({
            token: { sub: String(admin.id), email: admin.email, sv: admin.sessionGeneration, auth_time: Math.floor(Date.now() / 1000) - secondsAgo },
            secret,
          });
        const fresh = `next-auth.session-token=${await tokenSignedInAt(11 * 3600)}`;
        const stale = `next-auth.session-token=${await tokenSignedInAt(12 * 3600 + 60)}`;
        assert.equal(await opensAdmin(base(), fresh), true);
        assert.equal(await opensAdmin(base(), stale), false);
        assert.equal(await sessionEmail(base(), stale), null);
      });
    });
  });
}

describe("with an https PUBLIC_URL", () => {
  let env: TestEnvironment<Seed>;

  before(async () => {
    env = await createEnvironment(testBackends()[0], seed, { PUBLIC_URL: "https://panel.example" });
  });
  after(async () => {
    await env?.teardown();
  });

  test("responses carry HSTS and the session cookie is Secure", async () => {
    const login = await fetch(`${env.server.baseUrl}/login`);
    assert.match(login.headers.get("strict-transport-security") ?? "", /max-age=\d{7,}/);
    // SSO signs in the admin a key belongs to: one of the seeded admin's own.
    const api = apiClient(env.server.baseUrl, env.seed.adminsOwnKey);
    const link = await api.post("/api/admin/generate-sso-token");
    assert.match(link.headers.get("strict-transport-security") ?? "", /max-age=\d{7,}/);
    const token = new URL(link.body.sso_url).searchParams.get("token");
    const signedIn = await fetch(`${env.server.baseUrl}/sso?token=${token}`, { redirect: "manual" });
    const setCookie = signedIn.headers.getSetCookie().find((cookie) => cookie.startsWith("__Secure-next-auth.session-token="));
    assert.ok(setCookie, "the __Secure- session cookie is set");
    assert.match(setCookie, /;\s*Secure/i);
    assert.match(setCookie, /;\s*HttpOnly/i);
    assert.match(setCookie, /;\s*SameSite=Lax/i);
  });
});
