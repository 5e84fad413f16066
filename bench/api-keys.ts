import { sql } from "drizzle-orm";
import { createApiKey, listApiKeys, searchApiKeysBySecret } from "@/lib/api-keys/service";
import type { Backend } from "../tests/support/database";
import { verdict, withBenchDatabase } from "./support";

// API keys bench (called from bench/run.ts):
//   (g) the admin API-keys list with 10,000 keys: the server-side query behind
//       /admin/settings/api-keys (lib/api-keys/service.ts listApiKeys: the page's rows and the
//       total) for a name search, a key fragment and the first page unfiltered, and the POST
//       search of a pasted full secret (searchApiKeysBySecret: found by its hash) — target < 50 ms each (median of 20, after one warm-up), on
//       PostgreSQL and on PGlite.

const KEYS = 10_000;
const RUNS = 20;

async function median(run: () => Promise<unknown>): Promise<number> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(RUNS / 2)];
}

async function benchBackend(backend: Backend) {
  await withBenchDatabase(backend, async ({ db }) => {
    await db.execute(sql`
      INSERT INTO api_keys (name, key, secret_hash, secret_start, scope, created_at)
      SELECT 'Integration ' || g, 'hcp_' || md5('key' || g), encode(sha256(('secret' || g)::bytea), 'hex'), 'sec' || g % 10,
             'admin', now() - g * interval '1 minute'
      FROM generate_series(1, ${KEYS - 1}) AS g`);
    const known = await createApiKey(db, { name: "Billing system", scope: "admin" }, { type: "system" });
    await db.execute(sql`ANALYZE api_keys`);
    const searches: [string, { search?: string; per_page?: number }][] = [
      ["first page of 10, no search", { per_page: 10 }],
      ["name search 'Integration 4711'", { search: "Integration 4711", per_page: 10 }],
      ["key fragment", { search: known.key.slice(4, 14), per_page: 10 }],
      ["no match", { search: "nothing-like-this", per_page: 10 }],
    ];
    for (const [label, query] of searches) {
      const { total } = await listApiKeys(db, query);
      const ms = await median(() => listApiKeys(db, query));
      verdict(`(g) API keys list, ${KEYS} keys, ${label} (${total} found), ${backend}, ms`, ms, 50, "<");
    }
    const { total } = await searchApiKeysBySecret(db, known.secret);
    const ms = await median(() => searchApiKeysBySecret(db, known.secret));
    verdict(`(g) API keys list, ${KEYS} keys, pasted full secret (${total} found), ${backend}, ms`, ms, 50, "<");
  });
}

export async function runApiKeysBench() {
  console.log("\nAPI keys list (server side)");
  for (const backend of ["postgres", "pglite"] as const) await benchBackend(backend);
}
