import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { encode } from "next-auth/jwt";
import { Secret, TOTP } from "otpauth";
import type { Database } from "@/db/client";
import { createAccount, getAccount } from "@/lib/accounts/service";
import { createAdminUser } from "@/lib/admins/service";
import { beginTwoFactorSetup, confirmTwoFactorSetup, twoFactorStatus } from "@/lib/admins/two-factor";
import { createCronJob, listCronJobs } from "@/lib/cron/service";
import { assignDatabase, createDatabase, createDatabaseUser, listDatabases, listDatabaseUsers } from "@/lib/databases/service";
import { createDnsRecord, getDnsRecordOrThrow } from "@/lib/dns/service";
import { createDomain, listDomains } from "@/lib/domains/service";
import { createAlias, createMailbox, listAliases, listMailboxes, listMailDomains } from "@/lib/email/service";
import { getPhpSettings } from "@/lib/php-settings/service";
import { addPhpVersion } from "@/lib/php/service";
import { createPlan } from "@/lib/plans/service";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { seedActor, seedTenants } from "../support/seed";

// DESIGN.md "Nothing without a session", as an outsider with plain HTTP would try it: every page
// under app/admin (found in the file tree, so a new page is covered without touching this file),
// with no cookie, a garbage cookie, forged session cookies, and the headers of a client-side
// navigation. A browser follows the redirect and never shows what came with it; this test reads
// the redirect's body, which must carry none of the seeded data.

const APP_ADMIN = path.join(process.cwd(), "app", "admin");

/** Page routes under app/admin, as URL templates ("/admin/accounts/[id]/edit"). */
function adminPageRoutes(dir = APP_ADMIN, segments: string[] = ["admin"]): string[] {
  const routes: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile() && /^page\.(tsx|ts|jsx|js|mdx)$/.test(entry.name)) routes.push(`/${segments.join("/")}`);
    // Private folders (_x) and parallel-route slots (@x) are not URL segments of their own;
    // route groups ((x)) are folders whose pages live at the parent's URL.
    if (!entry.isDirectory() || entry.name.startsWith("_")) continue;
    const inUrl = !/^\(.*\)$/.test(entry.name) && !entry.name.startsWith("@");
    routes.push(...adminPageRoutes(path.join(dir, entry.name), inUrl ? [...segments, entry.name] : segments));
  }
  return routes;
}

const UNIQUE = `zq${Date.now().toString(36)}`;

async function seed(db: Database) {
  const tenants = await seedTenants(db);
  const plan = await createPlan(db, { name: `Plan-${UNIQUE}` }, seedActor);
  const account = await createAccount(
    db,
    { username: `u${UNIQUE}`, domain: `${UNIQUE}.example`, plan: plan.name, email: `owner-${UNIQUE}@example.com` },
    seedActor,
  );
  const php = await addPhpVersion(db, { version: "7.9" }, seedActor);
  // The Email tab's lists (and a mailbox's edit page): an address and a target no answer may carry.
  const mailbox = await createMailbox(db, account.id, { address: `box-${UNIQUE}@${UNIQUE}.example`, password: "a long enough password", quota_mb: 10, enabled: true });
  await createAlias(db, account.id, { address: `alias-${UNIQUE}@${UNIQUE}.example`, targets: [`far-${UNIQUE}@example.net`] });
  return { ...tenants, plan, account, php, mailbox };
}

type Seed = Awaited<ReturnType<typeof seed>>;

/** A seeded record's id for the `[id]` of a route, by the collection it follows. */
function fillRoute(template: string, seeded: Seed): string {
  const ids: Record<string, number> = {
    accounts: seeded.account.id,
    plans: seeded.plan.id,
    resellers: seeded.reseller.id,
    "php-versions": seeded.php.id,
    "api-keys": seeded.adminKey.id,
    admins: seeded.admin.id,
    mailboxes: seeded.mailbox.id,
  };
  const parts = template.split("/");
  return parts.map((part, index) => (/^\[.+\]$/.test(part) ? String(ids[parts[index - 1]] ?? 1) : part)).join("/");
}

/** Strings that must never reach a visitor without a session. */
function secretsOf(seeded: Seed): string[] {
  const values = [
    seeded.adminKey.key,
    seeded.resellerKey.key,
    seeded.aliceKey.key,
    seeded.bobKey.key,
    seeded.adminKey.secret.slice(0, 4) + "…",
    "test admin key",
    "alice.example",
    "bob.example",
    seeded.account.username,
    seeded.account.domain,
    seeded.plan.name,
    "owner-" + UNIQUE,
    `box-${UNIQUE}`,
    `alias-${UNIQUE}`,
    `far-${UNIQUE}`,
    "admin@example.com",
    "res1",
    os.release(),
  ];
  if (os.hostname().length >= 4) values.push(os.hostname());
  return values;
}

const SESSION_COOKIE = "next-auth.session-token";
const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
const claims = () => ({ sub: "1", email: "admin@example.com", name: "admin", iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 3600 });

async function visitors(): Promise<Array<{ name: string; headers: Record<string, string>; method?: string }>> {
  const forged = await encode({ token: claims(), secret: "not the panel's secret, just a guess", maxAge: 3600 });
  const unsigned = `${base64url({ alg: "none", typ: "JWT" })}.${base64url(claims())}.`;
  const navigation = {
    rsc: "1",
    "next-router-prefetch": "1",
    // The router's state on /login, navigating from there.
    "next-router-state-tree": encodeURIComponent(JSON.stringify(["", { children: ["login", { children: ["__PAGE__", {}] }] }])),
  };
  return [
    { name: "no cookie", headers: {} },
    { name: "garbage cookie", headers: { cookie: `${SESSION_COOKIE}=garbage` } },
    { name: "session cookie encrypted with a wrong secret", headers: { cookie: `${SESSION_COOKIE}=${forged}` } },
    { name: "unsigned JWT session cookie", headers: { cookie: `${SESSION_COOKIE}=${unsigned}` } },
    { name: "client navigation (RSC, prefetch, router state)", headers: navigation },
    { name: "client navigation with a forged cookie", headers: { ...navigation, cookie: `${SESSION_COOKIE}=${forged}` } },
    {
      name: "server action call with a forged cookie",
      method: "POST",
      headers: { "next-action": "7f".padEnd(42, "0"), "content-type": "text/plain;charset=UTF-8", cookie: `${SESSION_COOKIE}=${forged}` },
    },
  ];
}

/**
 * One request as the client router makes it: Next answers an RSC request whose `_rsc` cache-buster
 * is missing with a redirect to the same path with it, which the router follows.
 */
async function visit(url: string, headers: Record<string, string>, method = "GET") {
  let target = url;
  for (;;) {
    const response = await fetch(target, { method, redirect: "manual", headers, body: method === "POST" ? "[]" : undefined });
    const body = await response.text();
    const location = response.headers.get("location");
    const next = location ? new URL(location, target) : null;
    if (!next?.searchParams.has("_rsc") || target.includes("_rsc=") || next.pathname !== new URL(target).pathname) return { response, body };
    target = next.href;
  }
}

for (const backend of testBackends()) {
  describe(`admin pages without a session (${backend})`, () => {
    let env: TestEnvironment<Seed>;

    before(async () => {
      env = await createEnvironment(backend, seed);
    });
    after(async () => {
      await env?.teardown();
    });

    test("the file tree has the admin pages this test is meant to cover", () => {
      const routes = adminPageRoutes();
      for (const expected of ["/admin", "/admin/accounts", "/admin/settings/api-keys", "/admin/settings/api-keys/[id]/edit"]) {
        assert.ok(routes.includes(expected), `${expected} is found in app/admin`);
      }
    });

    test("every admin page answers a redirect to /login that carries no data", async () => {
      const failures: string[] = [];
      const secrets = secretsOf(env.seed);
      for (const route of adminPageRoutes()) {
        const url = fillRoute(route, env.seed);
        for (const visitor of await visitors()) {
          const { response, body } = await visit(`${env.server.baseUrl}${url}`, visitor.headers, visitor.method);
          // A server action call is redirected the way the router follows it: 200 + x-action-redirect.
          const actionRedirect = response.headers.get("x-action-redirect")?.split(";")[0];
          const location = actionRedirect ?? response.headers.get("location");
          const target = location ? new URL(location, env.server.baseUrl) : null;
          const problems: string[] = [];
          if (visitor.method === "POST" ? !(actionRedirect && response.status === 200) : response.status < 300 || response.status > 399) {
            problems.push(`status ${response.status}${visitor.method === "POST" ? " without x-action-redirect" : ""}`);
          }
          if (target?.pathname !== "/login") problems.push(`location ${location}`);
          else if (target.searchParams.get("callbackUrl") !== url) problems.push(`callbackUrl ${target.searchParams.get("callbackUrl")}`);
          const leaked = secrets.filter((secret) => body.includes(secret));
          if (leaked.length) problems.push(`body (${body.length} bytes) carries ${leaked.join(", ")}`);
          if (problems.length) failures.push(`${url} [${visitor.name}]: ${problems.join("; ")}`);
        }
      }
      assert.deepEqual(failures, []);
    });

    test("the sign-in form as the server sends it: posted, its button disabled until React runs (a submit before would put the password in a URL)", async () => {
      const response = await fetch(`${env.server.baseUrl}/login`);
      assert.equal(response.status, 200);
      const html = await response.text();
      const forms = html.match(/<form\b[^>]*>/g) ?? [];
      assert.equal(forms.length, 1, html.slice(0, 2000));
      assert.match(forms[0], /\bmethod="post"/);
      const submit = html.match(/<button\b[^>]*type="submit"[^>]*>/)?.[0] ?? "";
      assert.match(submit, /\bdisabled=""/, submit);
    });

    test("a cookie that opens no session is dropped with the cookie's own attributes", async () => {
      const response = await fetch(`${env.server.baseUrl}/admin`, { redirect: "manual", headers: { cookie: `${SESSION_COOKIE}=garbage` } });
      const dropped = response.headers.get("set-cookie") ?? "";
      assert.match(dropped, new RegExp(`^${SESSION_COOKIE.replace(/\./g, "\\.")}=;`));
      assert.match(dropped, /Max-Age=0/i);
      assert.match(dropped, /HttpOnly/i);
      assert.match(dropped, /SameSite=Lax/i);
    });
  });
}

// The same outsider calling the admin pages' server actions themselves, as a browser's form
// would, but with no session: each action by its id from the build's manifest, with arguments
// that would change something, posted to a page that carries it and to a page outside /admin.
// Every one is turned away with nothing of the panel's data in the answer, and afterwards
// nothing of the seeded account, its domains, databases, users, records, jobs and settings, nor
// the two-factor sign-in of the admin, has changed.

const ACTIONS_MANIFEST = path.join(process.cwd(), ".next", "server", "server-reference-manifest.json");

interface AdminAction {
  id: string;
  name: string;
  /** A page whose worker carries the action (its URL, ids filled in). */
  page: string;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/**
 * The exported actions of every "use server" file under app/admin that some other file of the app
 * uses, by name (one nothing uses is not in the build, and no request can reach it).
 */
function declaredAdminActions(): string[] {
  const files = sourceFiles(path.join(process.cwd(), "app")).map((file) => ({ file, source: fs.readFileSync(file, "utf8") }));
  return files
    .filter(({ file, source }) => file.startsWith(APP_ADMIN) && /^\s*["']use server["']/.test(source))
    .flatMap(({ file, source }) =>
      [...source.matchAll(/^export async function (\w+)\(/gm)]
        .map((match) => match[1])
        .filter((name) => files.some((other) => other.file !== file && new RegExp(`\\b${name}\\b`).test(other.source))),
    );
}

function builtAdminActions(seeded: ActionSeed): AdminAction[] {
  const manifest = JSON.parse(fs.readFileSync(ACTIONS_MANIFEST, "utf8")) as {
    node: Record<string, { workers: Record<string, unknown>; filename?: string; exportedName?: string }>;
  };
  return Object.entries(manifest.node)
    .filter(([, entry]) => entry.filename?.startsWith("app/admin/"))
    .map(([id, entry]) => {
      const worker = Object.keys(entry.workers).find((name) => name.startsWith("app/admin/"))!;
      const template = `/${worker.replace(/^app\//, "").replace(/\/page$/, "")}`;
      return { id, name: entry.exportedName!, page: fillActionRoute(template, seeded) };
    });
}

const ACTION_UNIQUE = `za${Date.now().toString(36)}`;
const TOTP_OF = (secret: string) => new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) });

async function seedActions(db: Database) {
  const tenants = await seedTenants(db);
  const account = await createAccount(db, { username: `a${ACTION_UNIQUE}`, domain: `${ACTION_UNIQUE}.example` }, seedActor);
  const extraDomain = await createDomain(db, account.id, { domain: `extra-${ACTION_UNIQUE}.example`, domain_type: "domain" });
  const database = await createDatabase(db, account, { database_name: "kept" });
  const user = await createDatabaseUser(db, account, { username: "kept", password: "a long enough password" });
  await assignDatabase(db, account.id, user.id, { database_id: database.id, privileges: ["SELECT"] });
  const record = await createDnsRecord(db, account.id, { domain_id: extraDomain.id, name: "www", type: "A", content: "203.0.113.5", ttl: 3600 });
  const job = await createCronJob(db, account.id, { schedule: "@daily", command: "true", is_enabled: true });
  const guarded = await createAdminUser(db, { email: `guarded-${ACTION_UNIQUE}@example.com`, password: "a long enough password" }, seedActor);
  const { secret } = await beginTwoFactorSetup(db, guarded.id);
  await confirmTwoFactorSetup(db, guarded.id, { code: TOTP_OF(secret).generate() });
  const mailbox = await createMailbox(db, account.id, { address: `kept@${account.domain}`, password: "a long enough password", quota_mb: 10, enabled: true });
  const alias = await createAlias(db, account.id, { address: `alias@${account.domain}`, targets: [mailbox.address] });
  const [mailDomain] = await listMailDomains(db, account.id);
  return { ...tenants, account, extraDomain, database, user, record, job, guarded, secret, mailbox, alias, mailDomain };
}
type ActionSeed = Awaited<ReturnType<typeof seedActions>>;

function fillActionRoute(template: string, seeded: ActionSeed): string {
  const ids: Record<string, number> = {
    accounts: seeded.account.id,
    domains: seeded.extraDomain.id,
    "database-users": seeded.user.id,
    dns: seeded.record.id,
    "cron-jobs": seeded.job.id,
    admins: seeded.guarded.id,
    "api-keys": seeded.adminKey.id,
    mailboxes: seeded.mailbox.id,
  };
  const parts = template.split("/");
  return parts.map((part, index) => (/^\[.+\]$/.test(part) ? String(ids[parts[index - 1]] ?? 1) : part)).join("/");
}

/** Arguments with which each action would change the seeded account (or admin) if it ran; others get the account's id. */
function argumentsOf(name: string, seeded: ActionSeed): unknown[] {
  const account = seeded.account.id;
  const calls: Record<string, unknown[]> = {
    createDomainAction: [account, { domain: `made-${ACTION_UNIQUE}.example`, domain_type: "domain" }],
    updateDomainAction: [account, seeded.extraDomain.id, { site_profile: "static", proxy_socket: null, php_version_id: null, is_php_fpm_enabled: true }],
    deleteDomainAction: [account, seeded.extraDomain.id],
    createDatabaseAction: [account, { database_name: "made" }],
    deleteDatabaseAction: [account, seeded.database.id],
    createDatabaseUserAction: [account, { username: "made", password: "a long enough password" }],
    grantDatabaseAction: [account, seeded.user.id, { database_id: seeded.database.id, privileges: ["ALL PRIVILEGES"] }],
    detachDatabaseAction: [account, seeded.user.id, seeded.database.id],
    deleteDatabaseUserAction: [account, seeded.user.id],
    createDnsRecordAction: [account, { domain_id: seeded.extraDomain.id, name: "made", type: "A", content: "203.0.113.9", ttl: 3600 }],
    updateDnsRecordAction: [account, seeded.record.id, { name: "www", type: "A", content: "203.0.113.6", ttl: 3600 }],
    deleteDnsRecordAction: [account, seeded.record.id],
    createCronJobAction: [account, { schedule: "@hourly", command: "echo made", is_enabled: true }],
    updateCronJobAction: [account, seeded.job.id, { schedule: "@daily", command: "true", is_enabled: false }],
    deleteCronJobAction: [account, seeded.job.id],
    updatePhpSettingsAction: [account, { memory_limit_mb: 512 }],
    suspendAccountAction: [account, "no session"],
    terminateAccountAction: [account, seeded.account.username],
    resetAdminTwoFactorAction: [seeded.guarded.id],
    renewRecoveryCodesAction: [{ password: "a long enough password", code: TOTP_OF(seeded.secret).generate() }],
    cancelTwoFactorSetupAction: [],
    createMailDomainAction: [account, { domain: seeded.extraDomain.domain }],
    rotateDkimKeyAction: [account, seeded.mailDomain.id],
    createMailboxAction: [account, { address: `made@${seeded.account.domain}`, password: "a long enough password", quota_mb: 10 }],
    updateMailboxAction: [account, seeded.mailbox.id, { password: "another long password", quota_mb: 5, enabled: false }],
    deleteMailboxAction: [account, seeded.mailbox.id],
    createAliasAction: [account, { address: `made@${seeded.account.domain}`, targets: [seeded.mailbox.address] }],
    deleteAliasAction: [account, seeded.alias.id],
  };
  return calls[name] ?? [account];
}

for (const backend of testBackends()) {
  describe(`admin server actions without a session (${backend})`, () => {
    let env: TestEnvironment<ActionSeed>;

    before(async () => {
      env = await createEnvironment(backend, seedActions);
    });
    after(async () => {
      await env?.teardown();
    });

    test("every server action under app/admin is turned away with no data, and changes nothing", async () => {
      const actions = builtAdminActions(env.seed);
      const built = new Set(actions.map((action) => action.name));
      assert.deepEqual(declaredAdminActions().filter((name) => !built.has(name)), [], "every declared action is in the build this test reads");
      const secrets = [env.seed.account.username, env.seed.account.domain, env.seed.extraDomain.domain, env.seed.guarded.email, "admin@example.com", env.seed.secret];
      const failures: string[] = [];
      for (const action of actions) {
        for (const visitor of (await visitors()).filter((one) => one.method !== "POST" && !("rsc" in one.headers)).slice(0, 3)) {
          for (const where of [action.page, "/login"]) {
            const response = await fetch(`${env.server.baseUrl}${where}`, {
              method: "POST",
              redirect: "manual",
              headers: { ...visitor.headers, "next-action": action.id, "content-type": "text/plain;charset=UTF-8", accept: "text/x-component" },
              body: JSON.stringify(argumentsOf(action.name, env.seed)),
            });
            const body = await response.text();
            const problems: string[] = [];
            // Under /admin the proxy answers before any page code runs: the router's redirect to sign in.
            if (where !== "/login" && !response.headers.get("x-action-redirect")?.startsWith("/login?")) {
              problems.push(`status ${response.status}, x-action-redirect ${response.headers.get("x-action-redirect")}`);
            }
            const leaked = secrets.filter((secret) => body.includes(secret));
            if (leaked.length) problems.push(`body carries ${leaked.join(", ")}`);
            if (problems.length) failures.push(`${action.name} at ${where} [${visitor.name}]: ${problems.join("; ")}`);
          }
        }
      }
      assert.deepEqual(failures, []);

      // What the calls would have changed, read with the server stopped (PGlite: one process at a time).
      await env.server.stop();
      const connection = await env.database.open();
      try {
        const { db } = connection;
        const { account, extraDomain, database, user, record, job, guarded } = env.seed;
        assert.deepEqual((await listDomains(db, account.id)).map((domain) => [domain.domain, domain.site_profile]), [
          [account.domain, "php"],
          [extraDomain.domain, "php"],
        ]);
        assert.deepEqual(
          (await listDatabases(db, account.id)).map((one) => [one.id, one.users.map((grant) => [grant.id, grant.privileges])]),
          [[database.id, [[user.id, ["SELECT"]]]]],
        );
        assert.deepEqual((await listDatabaseUsers(db, account.id)).map((one) => one.id), [user.id]);
        assert.equal((await getDnsRecordOrThrow(db, { accountId: account.id, id: record.id })).content, "203.0.113.5");
        assert.deepEqual((await listCronJobs(db, account.id)).map((one) => [one.id, one.schedule, one.is_enabled]), [[job.id, "@daily", true]]);
        assert.equal((await getPhpSettings(db, account.id)).memory_limit_mb, 256);
        assert.equal((await getAccount(db, account.id)).status, "active");
        assert.deepEqual(await twoFactorStatus(db, guarded.id), { enabled: true, recoveryCodesLeft: 10 });
        assert.deepEqual((await listMailDomains(db, account.id)).map((one) => [one.id, one.dkim.keys.length]), [[env.seed.mailDomain.id, 0]]);
        assert.deepEqual((await listMailboxes(db, account.id)).map((one) => [one.id, one.quota_mb, one.enabled]), [[env.seed.mailbox.id, 10, true]]);
        assert.deepEqual((await listAliases(db, account.id)).map((one) => [one.id, one.targets]), [[env.seed.alias.id, [env.seed.mailbox.address]]]);
      } finally {
        await connection.close();
      }
    });
  });
}
