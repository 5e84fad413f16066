import fs from "node:fs";
import path from "node:path";
import { createAccount } from "@/lib/accounts/service";
import { createAdminUser } from "@/lib/admins/service";
import { createApiKey } from "@/lib/api-keys/service";
import { addPhpVersion } from "@/lib/php/service";
import { createTestDatabase } from "../tests/support/database";
import { startServer } from "../tests/support/server";

// A fresh PGlite database with an admin, one account, PHP 8.2, an admin API key and 60 keys for
// the list tests; then the real server. Playwright calls the returned function at the end.

export const E2E_STATE = path.join(process.cwd(), ".tmp", "e2e.json");

export default async function globalSetup() {
  const database = await createTestDatabase("pglite");
  const connection = await database.open();
  const actor = { type: "system" } as const;
  const admin = await createAdminUser(connection.db, { email: "admin@example.com", password: "correct horse battery" }, actor);
  await createAccount(connection.db, { username: "alice", domain: "alice.example" }, actor);
  // A version for the domain forms whatever order the specs run in (hosting.spec adds more).
  await addPhpVersion(connection.db, { version: "8.2" }, actor);
  // The admin's own key: SSO signs in the admin a key belongs to.
  const adminKey = await createApiKey(connection.db, { name: "e2e admin key", scope: "admin" }, { type: "admin_user", id: admin.id });
  for (let i = 1; i <= 60; i++) {
    await createApiKey(connection.db, { name: `bulk-key-${String(i).padStart(2, "0")}`, scope: "admin" }, actor);
  }
  await connection.close();
  const server = await startServer({ ...database.env, METRICS_INTERVAL_S: "2" });
  await waitForMetrics(server.baseUrl, adminKey);
  fs.mkdirSync(path.dirname(E2E_STATE), { recursive: true });
  fs.writeFileSync(
    E2E_STATE,
    JSON.stringify({
      baseUrl: server.baseUrl,
      // The server's DATA_DIR: a spec writes an account's access log there (ACCESS_LOG_DIR's default).
      dataDir: database.env.DATA_DIR,
      admin: { email: admin.email, password: "correct horse battery" },
      adminKey: { key: adminKey.key, secret: adminKey.secret },
    }),
  );
  return async () => {
    await server.stop();
    await database.drop();
  };
}

/**
 * The dashboard test needs real samples: wait until the collector has stored two (network deltas
 * need a previous one). Reads are cached for 60 s, so each attempt clears the cache first.
 */
async function waitForMetrics(baseUrl: string, key: { key: string; secret: string }) {
  const headers = { "x-api-key": key.key, "x-api-secret": key.secret };
  for (let attempt = 0; attempt < 60; attempt++) {
    await fetch(`${baseUrl}/api/metrics/clear-cache`, { method: "POST", headers, body: JSON.stringify({ limit: 2 }) });
    const response = await fetch(`${baseUrl}/api/metrics/history?limit=2`, { headers });
    if (response.ok && (await response.json()).length >= 2) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error("the metrics collector stored no samples within 30 s");
}
