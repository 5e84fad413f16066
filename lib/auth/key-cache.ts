import type net from "node:net";
import { eq, sql } from "drizzle-orm";
import { connection } from "@/db/client";
import { preparedQuery } from "@/db/prepared";
import { adminUsers, apiKeys, hostingAccounts } from "@/db/schema";
import { buildAddressMatcher } from "@/lib/net/address";

// API keys, the accounts they act on and the admins behind sessions, cached per server instance
// so that authentication needs no key, account or admin lookup once it has been seen.
// Correctness rests on one read per request: triggers
// (db/migrations/0004_auth_generation_trigger.sql) bump auth_generation in the same transaction
// as any change that can revoke or re-scope access, from any process, and a request that sees a
// new value drops this instance's whole cache first. So revocation holds on the very next
// request on every instance sharing the database. (On PGlite the "read" is the value followed in
// memory: see db/client.ts followAuthGeneration.)

export interface CachedKey {
  id: number;
  secretHash: string;
  scope: "admin" | "reseller" | "account";
  resellerId: number | null;
  accountId: number | null;
  /** The admin an admin key belongs to (null: the operator's command-line key). */
  ownerAdminId: number | null;
  /** The key's own switch, and for an owned admin key its admin's too: both must be on. */
  isEnabled: boolean;
  ownerEnabled: boolean;
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

/** What an admin session is checked against (lib/admin-session/session.ts). */
export interface AdminRef {
  id: number;
  email: string;
  name: string;
  isEnabled: boolean;
  sessionGeneration: number;
  hasTwoFactor: boolean;
}

const MAX_ENTRIES = 10_000;

interface CacheState {
  /** The auth_generation value the cached entries belong to. */
  generation: number | null;
  keys: Map<string, CachedKey>;
  accounts: Map<string, AccountRef>;
  admins: Map<string, AdminRef>;
}

const globalForCache = globalThis as unknown as { __panelAuthCache?: CacheState };
const state: CacheState = (globalForCache.__panelAuthCache ??= {
  generation: null,
  keys: new Map(),
  accounts: new Map(),
  admins: new Map(),
});

async function readGeneration(): Promise<void> {
  const generation = await (await connection()).readAuthGeneration();
  if (generation === null || generation !== state.generation) {
    state.keys.clear();
    state.accounts.clear();
    state.admins.clear();
    state.generation = generation;
  }
}

/**
 * Wraps `read` so that concurrent callers share its calls, yet every caller is answered by a call
 * that *started after it called*: it sees every change committed before it. A caller arriving
 * while a call is under way joins the one queued behind it.
 */
export function sharedReadAfterArrival(read: () => Promise<void>): () => Promise<void> {
  let started: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  const start = () => {
    const call: Promise<void> = read().finally(() => {
      if (started === call) started = null;
    });
    started = call;
    return call;
  };
  return () => {
    if (queued) return queued;
    if (!started) return start();
    queued = started
      .catch(() => undefined)
      .then(() => {
        queued = null;
        return start();
      });
    return queued;
  };
}

/**
 * Brings the cache up to date with auth_generation, dropping it if the value moved. Call once
 * per request. Concurrent requests share reads (see sharedReadAfterArrival): under load one read
 * per round trip instead of one per request, and still revoked on the very next request.
 */
export const refreshAuthCache = sharedReadAfterArrival(readGeneration);

async function cached<T>(map: Map<string, T>, cacheKey: string, load: () => Promise<T | null>): Promise<T | null> {
  const hit = map.get(cacheKey);
  if (hit) return hit;
  const generation = state.generation;
  const value = await load();
  // A change committed while loading moves the generation: the next request reloads anyway.
  if (value && generation !== null && generation === state.generation) {
    if (map.size >= MAX_ENTRIES) map.clear();
    map.set(cacheKey, value);
  }
  return value;
}

// The owner's is_enabled is read with the key: disabling or removing an admin bumps
// auth_generation (triggers on admin_users and api_keys), so a cached key never outlives it.
const keyByToken = preparedQuery((db) =>
  db
    .select({ key: apiKeys, ownerEnabled: adminUsers.isEnabled })
    .from(apiKeys)
    .leftJoin(adminUsers, eq(adminUsers.id, apiKeys.ownerAdminId))
    .where(eq(apiKeys.key, sql.placeholder("token")))
    .prepare("api_key_by_token"),
);

export function findKey(token: string): Promise<CachedKey | null> {
  return cached(state.keys, token, async () => {
    const [found] = await keyByToken((await connection()).db).execute({ token });
    if (!found) return null;
    const row = found.key;
    return {
      id: row.id,
      secretHash: row.secretHash,
      scope: row.scope,
      resellerId: row.resellerId,
      accountId: row.accountId,
      ownerAdminId: row.ownerAdminId,
      isEnabled: row.isEnabled,
      ownerEnabled: row.ownerAdminId === null || found.ownerEnabled === true,
      allowedAddresses: row.allowedIps.length ? buildAddressMatcher(row.allowedIps) : null,
      allowedEndpoints: row.allowAllEndpoints ? null : new Set(row.allowedEndpoints),
    };
  });
}

const accountRefColumns = {
  id: hostingAccounts.id,
  username: hostingAccounts.username,
  status: hostingAccounts.status,
  resellerId: hostingAccounts.resellerId,
};
const accountById = preparedQuery((db) =>
  db.select(accountRefColumns).from(hostingAccounts).where(eq(hostingAccounts.id, sql.placeholder("id"))).prepare("account_ref_by_id"),
);
const accountByUsername = preparedQuery((db) =>
  db
    .select(accountRefColumns)
    .from(hostingAccounts)
    .where(eq(hostingAccounts.username, sql.placeholder("username")))
    .prepare("account_ref_by_username"),
);

/** An account by id (a number) or username, as `X-Hosting-Account` names it. */
export function findAccount(ref: number | string): Promise<AccountRef | null> {
  const cacheKey = typeof ref === "number" ? `id:${ref}` : `username:${ref}`;
  return cached(state.accounts, cacheKey, async () => {
    const { db } = await connection();
    const [row] =
      typeof ref === "number"
        ? await accountById(db).execute({ id: ref })
        : await accountByUsername(db).execute({ username: ref });
    return row ?? null;
  });
}

export function findAdmin(id: number): Promise<AdminRef | null> {
  return cached(state.admins, String(id), async () => {
    const { db } = await connection();
    const [row] = await db
      .select({
        id: adminUsers.id,
        email: adminUsers.email,
        name: adminUsers.name,
        isEnabled: adminUsers.isEnabled,
        sessionGeneration: adminUsers.sessionGeneration,
        hasTwoFactor: sql<boolean>`${adminUsers.totpSecret} is not null`,
      })
      .from(adminUsers)
      .where(eq(adminUsers.id, id));
    return row ?? null;
  });
}
