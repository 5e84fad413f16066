import assert from "node:assert/strict";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { adminUsers } from "@/db/schema";
import { createAdminUser, setAdminEnabled } from "@/lib/admins/service";
import { createApiKey } from "@/lib/api-keys/service";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { type Credentials, apiClient } from "../support/http";
import { startServer, type TestServer } from "../support/server";
import { seedActor } from "../support/seed";

// An admin leaves (disabled, or removed from the database): whatever admin keys they made, and
// whatever they kept of them, must stop on the very next request, on every instance; and no key
// signs anyone in through SSO but the admin it belongs to — least of all the first admin.

const PASSWORD = "an admin's long password";

async function adminWithKey(db: Database, email: string) {
  const admin = await createAdminUser(db, { email, password: PASSWORD }, seedActor);
  const key = await createApiKey(db, { name: `${email}'s key`, scope: "admin" }, { type: "admin_user", id: admin.id });
  return { admin, key: { key: key.key, secret: key.secret } satisfies Credentials };
}

async function seed(db: Database) {
  // The first admin: what a key whose admin is gone used to sign in as.
  const first = await createAdminUser(db, { email: "first@example.com", password: PASSWORD }, seedActor);
  const leaver = await adminWithKey(db, "leaver@example.com");
  await setAdminEnabled(db, leaver.admin.id, false, seedActor);
  const removed = await adminWithKey(db, "removed@example.com");
  await db.delete(adminUsers).where(eq(adminUsers.id, removed.admin.id));
  const owner = await adminWithKey(db, "owner@example.com");
  const operatorKey = await createApiKey(db, { name: "made on the command line", scope: "admin" }, { type: "cli" });
  const ownedOperatorKey = await createApiKey(db, { name: "command line, --owner", scope: "admin" }, { type: "cli" }, { ownerAdminId: owner.admin.id });
  return {
    first,
    leaver,
    removed,
    owner,
    operatorKey: { key: operatorKey.key, secret: operatorKey.secret },
    ownedOperatorKey: { key: ownedOperatorKey.key, secret: ownedOperatorKey.secret },
  };
}

/** A request written on a bare socket, as an attacker's script would: the status code answered. */
function rawStatus(baseUrl: string, credentials: Credentials, path: string, method = "GET"): Promise<number> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(
        `${method} ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nX-API-Key: ${credentials.key}\r\n` +
          `X-API-Secret: ${credentials.secret}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
    });
    let answer = "";
    socket.on("data", (chunk) => (answer += chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
  });
}

/** The e-mail of the admin an SSO link signs in, or null when it signs nobody in. */
async function ssoSignsIn(baseUrl: string, credentials: Credentials): Promise<{ status: number; email: string | null }> {
  const response = await apiClient(baseUrl, credentials).post("/api/admin/generate-sso-token");
  if (response.status !== 200) return { status: response.status, email: null };
  const visit = await fetch(response.body.sso_url, { redirect: "manual" });
  const cookie = visit.headers.getSetCookie().find((value) => value.startsWith("next-auth.session-token="))?.split(";")[0];
  if (!cookie) return { status: visit.status, email: null };
  const session = (await (await fetch(`${baseUrl}/api/auth/session`, { headers: { cookie } })).json()) as { user?: { email?: string } };
  return { status: 200, email: session.user?.email ?? null };
}

for (const backend of testBackends()) {
  describe(`admin keys follow their admin (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const base = () => env.server.baseUrl;

    before(async () => {
      env = await createEnvironment(backend, seed);
    });
    after(async () => {
      await env?.teardown();
    });

    test("a disabled admin's key is refused over raw HTTP (403), everywhere it reaches", async () => {
      const { key } = env.seed.leaver;
      assert.equal(await rawStatus(base(), key, "/api/admin/plans"), 403);
      assert.equal(await rawStatus(base(), key, "/api/admin/accounts"), 403);
      assert.equal(await rawStatus(base(), key, "/api/admin/generate-sso-token", "POST"), 403);
      const refused = await apiClient(base(), key).get("/api/admin/plans");
      assert.match(refused.body.error, /admin is disabled/);
    });

    test("a removed admin's key is gone (401), and its SSO signs nobody in — not the first admin", async () => {
      const { key } = env.seed.removed;
      assert.equal(await rawStatus(base(), key, "/api/admin/plans"), 401);
      const sso = await ssoSignsIn(base(), key);
      assert.equal(sso.email, null, `signed in as ${sso.email}`);
      assert.equal(sso.status, 401);
    });

    test("SSO signs in the key's own admin, also for a command-line key made with --owner", async () => {
      assert.deepEqual(await ssoSignsIn(base(), env.seed.owner.key), { status: 200, email: "owner@example.com" });
      assert.deepEqual(await ssoSignsIn(base(), env.seed.ownedOperatorKey), { status: 200, email: "owner@example.com" });
    });

    test("a command-line key without an owner works on the API, and SSO refuses it (403) instead of picking an admin", async () => {
      assert.equal((await apiClient(base(), env.seed.operatorKey).get("/api/admin/plans")).status, 200);
      const refused = await apiClient(base(), env.seed.operatorKey).post("/api/admin/generate-sso-token");
      assert.equal(refused.status, 403);
      assert.match(refused.body.error, /belongs to no admin/);
    });

    if (backend === "postgres") {
      // Changes made beside two running instances, as another admin's session or the CLI would.
      describe("two instances on one database", () => {
        let second: TestServer;
        const db = () => env.db!;
        const both = () => [base(), second.baseUrl];
        const statuses = async (key: Credentials) => Promise.all(both().map((server) => rawStatus(server, key, "/api/admin/plans")));

        before(async () => {
          second = await startServer(env.database.env);
        });
        after(async () => {
          await second?.stop();
        });

        test("disabling the admin stops their key on the very next request on both; enabling brings it back", async () => {
          const { admin, key } = env.seed.owner;
          assert.deepEqual(await statuses(key), [200, 200], "both caches warm");
          await setAdminEnabled(db(), admin.id, false, seedActor);
          assert.deepEqual(await statuses(key), [403, 403]);
          await setAdminEnabled(db(), admin.id, true, seedActor);
          assert.deepEqual(await statuses(key), [200, 200]);
        });

        test("removing the admin removes their key on both (401)", async () => {
          const gone = await adminWithKey(db(), "gone@example.com");
          assert.deepEqual(await statuses(gone.key), [200, 200]);
          await db().delete(adminUsers).where(eq(adminUsers.id, gone.admin.id));
          assert.deepEqual(await statuses(gone.key), [401, 401]);
        });

        test("a link made before its admin was disabled signs nobody in", async () => {
          const late = await adminWithKey(db(), "late@example.com");
          const link = await apiClient(base(), late.key).post("/api/admin/generate-sso-token");
          assert.equal(link.status, 200);
          await setAdminEnabled(db(), late.admin.id, false, seedActor);
          const visit = await fetch(link.body.sso_url, { redirect: "manual" });
          assert.equal(visit.status, 403);
          assert.equal(visit.headers.getSetCookie().length, 0);
        });
      });
    }
  });
}
