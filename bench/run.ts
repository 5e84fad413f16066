import { createTestDatabase } from "../tests/support/database";
import { startServer } from "../tests/support/server";
import { createAccount } from "@/lib/accounts/service";
import { createApiKey } from "@/lib/api-keys/service";
import { insertDomainWithZone } from "@/lib/domains/service";
import { measure, printTable, ratio, ratioToBracket, verdict } from "./support";

// `npm run bench`: the production server on PostgreSQL (a fresh database on TEST_POSTGRES_URL's
// server), autocannon at 32 connections, 10 s per route (BENCH_SECONDS).
//   (a) a bare route returning constant JSON
//   (b) the account-scoped list of GET /api/client/domains without authentication
//       (bench-only route, present only with PANEL_BENCH_ROUTES=1, which only this script sets)
//   (c) GET /api/client/domains through the full API-key check
// Target: c/b ≥ 0.9 — authentication nearly free. (b) is measured before and after (c), and c/b
// is taken against their mean.

const actor = { type: "system" } as const;
const database = await createTestDatabase("postgres");
const connection = await database.open();
const account = await createAccount(connection.db, { username: "benchuser", domain: "bench.example" }, actor);
for (let i = 1; i <= 9; i++) {
  await insertDomainWithZone(connection.db, { accountId: account.id, domain: `site${i}.bench.example`, domainType: "domain" });
}
const key = await createApiKey(connection.db, { name: "bench", scope: "account", account_id: account.id }, actor);
const server = await startServer({ ...database.env, PANEL_BENCH_ROUTES: "1" });

try {
  const base = server.baseUrl;
  // Warm-up of each route alike (JIT, connection pool, key cache), so order does not favour one.
  await measure("warm-up", `${base}/api/bench/bare`, {}, 2);
  await measure("warm-up", `${base}/api/bench/account-domains?account=${account.id}`, {}, 2);
  await measure("warm-up", `${base}/api/client/domains`, { "x-api-key": key.key, "x-api-secret": key.secret }, 2);
  const bare = await measure("(a) bare constant JSON", `${base}/api/bench/bare`);
  const unauthenticatedUrl = `${base}/api/bench/account-domains?account=${account.id}`;
  const queryBefore = await measure("(b) same list query, no auth, before", unauthenticatedUrl);
  const authed = await measure("(c) GET /api/client/domains with key", `${base}/api/client/domains`, {
    "x-api-key": key.key,
    "x-api-secret": key.secret,
  });
  const queryAfter = await measure("(b) same list query, no auth, after", unauthenticatedUrl);
  printTable([bare, queryBefore, authed, queryAfter]);
  verdict("c/b (authentication cost; b before and after)", ratioToBracket(authed, queryBefore, queryAfter), 0.9);
  console.log(`c/a: ${ratio(authed, bare).toFixed(3)} (information: one query against no query)`);
} finally {
  await server.stop();
  await connection.close();
  await database.drop();
}
await (await import("./metrics")).runMetricsBench();
await (await import("./api-keys")).runApiKeysBench();
await (await import("./startup")).runStartupBench();
