import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { encode } from "next-auth/jwt";
import type { Database } from "@/db/client";
import { createAccount } from "@/lib/accounts/service";
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
  return { ...tenants, plan, account, php };
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
