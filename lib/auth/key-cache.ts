import type net from "node:net";
import { eq } from "drizzle-orm";
import { connection } from "@/db/client";
import { apiKeys, hostingAccounts } from "@/db/schema";
import { buildAddressMatcher } from "@/lib/net/address";

// API keys and the accounts they act on, cached per server instance so that authentication
// costs no database round trip once a key has been seen. Correctness rests on invalidation:
// triggers (db/migrations/0001_auth_cache_notify.sql) NOTIFY "panel_auth" on any change that can
// revoke or re-scope access, from any process, and every instance drops its whole cache. Until
// the instance is subscribed (and whenever it resubscribes) the cache is bypassed.

export interface CachedKey {
  id: number;
  secretHash: string;
  scope: "admin" | "reseller" | "account";
  resellerId: number | null;
  accountId: number | null;
  createdByAdminId: number | null;
  isEnabled: boolean;
  /** null = any address. */
  allowedAddresses: net.BlockList | null;
  /** null = all endpoints. */
  allowedEndpoints: ReadonlySet<string> | null;
}

export interface AccountRef {
  id: number;
  username: string;
  status: "active" | "suspended";
  resellerId: number | null;
}

const MAX_ENTRIES = 10_000;

interface CacheState {
  subscribed: boolean;
  /** Bumped by every invalidation; a load that started before one is not stored. */
  generation: number;
  keys: Map<string, CachedKey>;
  accounts: Map<string, AccountRef>;
  subscription?: Promise<void>;
}

const globalForCache = globalThis as unknown as { __panelAuthCache?: CacheState };
const state: CacheState = (globalForCache.__panelAuthCache ??= {
  subscribed: false,
  generation: 0,
  keys: new Map(),
  accounts: new Map(),
});

function invalidate() {
  state.generation++;
  state.keys.clear();
  state.accounts.clear();
}

function subscribe(): Promise<void> {
  return (state.subscription ??= connection()
    .then((conn) =>
      conn.listen("panel_auth", invalidate, () => {
        invalidate();
        state.subscribed = true;
      }),
    )
    .catch((error) => {
      state.subscription = undefined;
      console.error("[auth] could not subscribe to key changes; the key cache stays off:", error);
    }));
}

async function cached<T>(
  map: Map<string, T>,
  cacheKey: string,
  load: () => Promise<T | null>,
): Promise<T | null> {
  if (!state.subscribed) await subscribe();
  const hit = state.subscribed ? map.get(cacheKey) : undefined;
  if (hit) return hit;
  const generation = state.generation;
  const value = await load();
  if (value && state.subscribed && generation === state.generation) {
    if (map.size >= MAX_ENTRIES) map.clear();
    map.set(cacheKey, value);
  }
  return value;
}

export function findKey(token: string): Promise<CachedKey | null> {
  return cached(state.keys, token, async () => {
    const { db } = await connection();
    const [row] = await db.select().from(apiKeys).where(eq(apiKeys.key, token));
    if (!row) return null;
    return {
      id: row.id,
      secretHash: row.secretHash,
      scope: row.scope,
      resellerId: row.resellerId,
      accountId: row.accountId,
      createdByAdminId: row.createdByAdminId,
      isEnabled: row.isEnabled,
      allowedAddresses: row.allowedIps.length ? buildAddressMatcher(row.allowedIps) : null,
      allowedEndpoints: row.allowAllEndpoints ? null : new Set(row.allowedEndpoints),
    };
  });
}

/** An account by id (a number) or username, as `X-Hosting-Account` names it. */
export function findAccount(ref: number | string): Promise<AccountRef | null> {
  const cacheKey = typeof ref === "number" ? `id:${ref}` : `username:${ref}`;
  return cached(state.accounts, cacheKey, async () => {
    const { db } = await connection();
    const [row] = await db
      .select({
        id: hostingAccounts.id,
        username: hostingAccounts.username,
        status: hostingAccounts.status,
        resellerId: hostingAccounts.resellerId,
      })
      .from(hostingAccounts)
      .where(typeof ref === "number" ? eq(hostingAccounts.id, ref) : eq(hostingAccounts.username, ref));
    return row ?? null;
  });
}
