import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import type { Database } from "@/db/client";
import { adminUsers } from "@/db/schema";
import { createAccount } from "@/lib/accounts/service";
import { createAdminUser } from "@/lib/admins/service";
import { beginTwoFactorSetup, confirmTwoFactorSetup, resetTwoFactor } from "@/lib/admins/two-factor";
import { createPlan } from "@/lib/plans/service";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { seedActor, seedTenants } from "../support/seed";

// Admin two-factor sign-in over raw HTTP against the real server: the credentials form without a
// code (or with a wrong, replayed or throttled one) gives no session; recovery codes work once;
// under ADMIN_2FA_REQUIRED an admin without a second factor reaches only the set-up page, whatever
// the admin URL, with no data in the redirects; a cookie from before a reset is signed out.

const PASSWORD = "correct horse battery";
const SETUP_PATH = "/admin/settings/two-factor";
const UNIQUE = `tf${Date.now().toString(36)}`;

const totp = (secret: string) => new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) });
/** The code of the time step `offset` steps from now (the server accepts -1, 0 and +1). */
const codeAt = (secret: string, offset: number) => totp(secret).generate({ timestamp: Date.now() + offset * 30_000 });

/** An admin with two-factor sign-in on, set up through the services as the page does. */
async function twoFactorAdmin(db: Database, email: string) {
  const admin = await createAdminUser(db, { email, password: PASSWORD }, seedActor);
  const { secret } = await beginTwoFactorSetup(db, admin.id);
  const { recoveryCodes } = await confirmTwoFactorSetup(db, admin.id, { code: codeAt(secret, 0) });
  // The set-up code's step is taken; let the test use this step's codes too.
  await db.update(adminUsers).set({ totpLastStep: null }).where(eq(adminUsers.id, admin.id));
  return { ...admin, secret, recoveryCodes };
}

async function seed(db: Database) {
  const tenants = await seedTenants(db);
  const plan = await createPlan(db, { name: `Plan-${UNIQUE}` }, seedActor);
  const account = await createAccount(db, { username: `u${UNIQUE}`, domain: `${UNIQUE}.example`, plan: plan.name }, seedActor);
  return {
    ...tenants,
    plan,
    account,
    plain: await createAdminUser(db, { email: `plain-${UNIQUE}@example.com`, password: PASSWORD }, seedActor),
    codes: await twoFactorAdmin(db, "codes@example.com"),
    recovery: await twoFactorAdmin(db, "recovery@example.com"),
    throttled: await twoFactorAdmin(db, "throttled@example.com"),
    reset: await twoFactorAdmin(db, "reset@example.com"),
  };
}
type Seed = Awaited<ReturnType<typeof seed>>;

const cookiesOf = (response: Response) => response.headers.getSetCookie().map((cookie) => cookie.split(";")[0]);

/**
 * The login form's request: next-auth's credentials callback with email, password and code, from
 * client address `from` (the server trusts this test as its proxy). Answers the session cookie
 * (null when none was issued) and next-auth's error.
 */
async function signIn(baseUrl: string, from: string, email: string, password: string, code?: string) {
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`, { headers: { "x-forwarded-for": from } });
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const response = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookiesOf(csrf).join("; "), "x-forwarded-for": from },
    body: new URLSearchParams({ csrfToken, email, password, ...(code === undefined ? {} : { code }), json: "true" }),
  });
  const session = response.headers.getSetCookie().find((cookie) => /next-auth\.session-token=[^;]/.test(cookie));
  const location = response.headers.get("location") ?? ((await response.json().catch(() => ({}))) as { url?: string }).url ?? "";
  const error = location ? new URL(location, baseUrl).searchParams.get("error") : null;
  return { cookie: session ? session.split(";")[0] : null, error };
}

/** 200 for a page the cookie opens; else where the redirect leads (the body must carry no data). */
async function visit(baseUrl: string, pagePath: string, cookie: string, secrets: string[]) {
  const response = await fetch(`${baseUrl}${pagePath}`, { redirect: "manual", headers: { cookie } });
  const body = await response.text();
  if (response.status === 200) return "open";
  assert.equal(response.status, 307, `${pagePath}: ${response.status}`);
  for (const secret of secrets) assert.ok(!body.includes(secret), `${pagePath}: the redirect's body carries ${secret}`);
  return new URL(response.headers.get("location")!, baseUrl).pathname;
}

/** Page routes under app/admin (as admin-pages-no-session.test.ts finds them), `[id]` filled in. */
function adminPages(seeded: Seed, dir = path.join(process.cwd(), "app", "admin"), segments = ["admin"]): string[] {
  const ids: Record<string, number> = {
    accounts: seeded.account.id,
    plans: seeded.plan.id,
    resellers: seeded.reseller.id,
    "php-versions": 1,
    "api-keys": seeded.adminKey.id,
    admins: seeded.admin.id,
  };
  const pages: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile() && /^page\.tsx?$/.test(entry.name)) pages.push(`/${segments.join("/")}`);
    if (!entry.isDirectory() || entry.name.startsWith("_")) continue;
    const segment = entry.name === "[id]" ? String(ids[segments.at(-1)!]) : entry.name;
    pages.push(...adminPages(seeded, path.join(dir, entry.name), [...segments, segment]));
  }
  return pages;
}

for (const backend of testBackends()) {
  describe(`admin two-factor sign-in (${backend})`, () => {
    let env: TestEnvironment<Seed>;
    const base = () => env.server.baseUrl;

    before(async () => {
      env = await createEnvironment(backend, seed, { TRUSTED_PROXIES: "127.0.0.1/32, ::1" });
    });
    after(async () => {
      await env?.teardown();
    });

    test("the right password without a code asks for the code and issues no session; a wrong code issues none", async () => {
      const { codes } = env.seed;
      const noCode = await signIn(base(), "198.51.100.1", codes.email, PASSWORD);
      assert.equal(noCode.cookie, null);
      assert.equal(noCode.error, "TwoFactorRequired");
      const wrong = await signIn(base(), "198.51.100.1", codes.email, PASSWORD, codeAt(codes.secret, 0) === "000000" ? "111111" : "000000");
      assert.equal(wrong.cookie, null);
      assert.notEqual(wrong.error, null);
      const wrongPassword = await signIn(base(), "198.51.100.1", codes.email, "not the password", codeAt(codes.secret, 0));
      assert.equal(wrongPassword.cookie, null);
      assert.notEqual(wrongPassword.error, "TwoFactorRequired", "a wrong password does not get as far as the code");
    });

    test("a right code signs in, once: the same code again is refused, and so is an earlier step's", async () => {
      const { codes } = env.seed;
      const code = codeAt(codes.secret, 0);
      const signedIn = await signIn(base(), "198.51.100.2", codes.email, PASSWORD, code);
      assert.ok(signedIn.cookie, `signed in (${signedIn.error})`);
      assert.equal(await visit(base(), "/admin/accounts", signedIn.cookie, []), "open");
      const replayed = await signIn(base(), "198.51.100.2", codes.email, PASSWORD, code);
      assert.equal(replayed.cookie, null, "a code opens one sign-in only");
      const earlier = await signIn(base(), "198.51.100.2", codes.email, PASSWORD, codeAt(codes.secret, -1));
      assert.equal(earlier.cookie, null, "a step before the last one used is refused");
      const next = await signIn(base(), "198.51.100.2", codes.email, PASSWORD, codeAt(codes.secret, 1));
      assert.ok(next.cookie, "the next step's code (clock drift) is accepted");
    });

    test("a recovery code signs in once, in any case and with or without its dash", async () => {
      const { recovery } = env.seed;
      assert.equal(recovery.recoveryCodes.length, 10);
      assert.equal(new Set(recovery.recoveryCodes).size, 10);
      const [first, second] = recovery.recoveryCodes;
      const once = await signIn(base(), "198.51.100.3", recovery.email, PASSWORD, first);
      assert.ok(once.cookie, `signed in with a recovery code (${once.error})`);
      const again = await signIn(base(), "198.51.100.3", recovery.email, PASSWORD, first);
      assert.equal(again.cookie, null, "a used recovery code is refused");
      const typed = await signIn(base(), "198.51.100.3", recovery.email, PASSWORD, second.replace("-", "").toLowerCase());
      assert.ok(typed.cookie, "another recovery code, typed loosely");
      const otherAdmins = await signIn(base(), "198.51.100.3", env.seed.codes.email, PASSWORD, recovery.recoveryCodes[2]);
      assert.equal(otherAdmins.cookie, null, "a recovery code is its admin's only");
    });

    test("wrong codes count towards the sign-in throttle", async () => {
      const { throttled } = env.seed;
      for (let attempt = 0; attempt < 5; attempt++) {
        const wrong = await signIn(base(), "198.51.100.4", throttled.email, PASSWORD, "ABCDE-FGHJK");
        assert.equal(wrong.cookie, null);
      }
      const right = await signIn(base(), "198.51.100.4", throttled.email, PASSWORD, codeAt(throttled.secret, 0));
      assert.equal(right.cookie, null, "throttled after five wrong codes");
      assert.match(right.error ?? "", /Too many failed sign-ins/);
      const elsewhere = await signIn(base(), "198.51.100.5", throttled.email, PASSWORD, codeAt(throttled.secret, 0));
      assert.ok(elsewhere.cookie, "another address is not throttled");
    });

    if (backend !== "postgres") return;

    test("a cookie from before a two-factor reset is signed out", async () => {
      const { reset } = env.seed;
      const session = await signIn(base(), "198.51.100.6", reset.email, PASSWORD, codeAt(reset.secret, 0));
      assert.ok(session.cookie);
      assert.equal(await visit(base(), "/admin/settings/admins", session.cookie, []), "open");
      const record = await resetTwoFactor(env.db!, reset.id, seedActor);
      assert.equal(record.two_factor, false);
      assert.equal(await visit(base(), "/admin/settings/admins", session.cookie, [env.seed.admin.email]), "/login");
      const passwordOnly = await signIn(base(), "198.51.100.6", reset.email, PASSWORD);
      assert.ok(passwordOnly.cookie, "after the reset the password alone signs in");
    });
  });
}

describe("ADMIN_2FA_REQUIRED=1", () => {
  let env: TestEnvironment<Seed>;
  const base = () => env.server.baseUrl;

  before(async () => {
    env = await createEnvironment(testBackends()[0], seed, { TRUSTED_PROXIES: "127.0.0.1/32, ::1", ADMIN_2FA_REQUIRED: "1" });
  });
  after(async () => {
    await env?.teardown();
  });

  test("an admin without a second factor reaches only the set-up page: every other admin URL redirects there with no data", async () => {
    const session = await signIn(base(), "198.51.100.10", env.seed.plain.email, PASSWORD);
    assert.ok(session.cookie, "the password signs in (to the set-up page)");
    const secrets = [`u${UNIQUE}`, `Plan-${UNIQUE}`, "alice", "res1", env.seed.admin.email, env.seed.codes.email, env.seed.adminKey.key];
    const pages = adminPages(env.seed).filter((page) => page !== SETUP_PATH);
    assert.ok(pages.includes("/admin") && pages.includes("/admin/accounts") && pages.length > 10, pages.join(" "));
    for (const page of pages) assert.equal(await visit(base(), page, session.cookie, secrets), SETUP_PATH, page);

    // A server action posted to a data page (as a form would) is turned to the set-up page too.
    const action = await fetch(`${base()}/admin/accounts`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: session.cookie, "next-action": "0".repeat(40), "content-type": "text/plain;charset=UTF-8" },
      body: "[]",
    });
    const actionBody = await action.text();
    assert.match(action.headers.get("x-action-redirect") ?? "", new RegExp(`^${SETUP_PATH}`));
    for (const secret of secrets) assert.ok(!actionBody.includes(secret), `the action's answer carries ${secret}`);

    const setup = await fetch(`${base()}${SETUP_PATH}`, { headers: { cookie: session.cookie } });
    assert.equal(setup.status, 200);
    const setupPage = await setup.text();
    assert.match(setupPage, /requires two-factor sign-in/);
    for (const secret of secrets) assert.ok(!setupPage.includes(secret), `the set-up page carries ${secret}`);
  });

  test("an admin with a second factor works as usual", async () => {
    const { codes } = env.seed;
    const session = await signIn(base(), "198.51.100.11", codes.email, PASSWORD, codeAt(codes.secret, 0));
    assert.ok(session.cookie);
    assert.equal(await visit(base(), "/admin/accounts", session.cookie, []), "open");
  });
});
