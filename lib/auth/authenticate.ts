import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import { connection } from "@/db/client";
import { apiKeys } from "@/db/schema";
import type { Actor } from "@/lib/audit/service";
import { secretMatches } from "@/lib/api-keys/tokens";
import { type Operation, endpointOf } from "@/lib/http/operation";
import { addressMatches } from "@/lib/net/address";
import { type AccountRef, type CachedKey, findAccount, findKey, refreshAuthCache } from "./key-cache";

/** The caller behind a request: the key, what it is scoped to, where it came from. */
export interface Principal {
  keyId: number;
  scope: CachedKey["scope"];
  resellerId: number | null;
  accountId: number | null;
  /** The admin an admin key belongs to (null: none, see lib/sso). */
  adminUserId: number | null;
  clientIp: string | null;
}

/** The audit log's actor for what a key does. */
export const actorOf = (principal: Principal): Actor => ({ type: "api_key", id: principal.keyId, ip: principal.clientIp });

export class AuthFailure extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404,
    message: string,
  ) {
    super(message);
  }
}

/** The key scopes each audience admits (DESIGN.md "HTTP contract"). */
const audienceScopes: Record<Operation["audience"], readonly CachedKey["scope"][]> = {
  admin: ["admin"],
  reseller: ["admin", "reseller"],
  client: ["admin", "reseller", "account"],
};

export interface AuthHeaders {
  apiKey: string | null;
  apiSecret: string | null;
  hostingAccount: string | null;
}

/**
 * The checks of DESIGN.md "HTTP contract", in its order: credentials (401), disabled (403; an
 * admin key also when its admin is), address (403), endpoint (403), audience (403), then for
 * client operations the account: header required for admin/reseller keys (400), unknown or
 * foreign account (404), suspended account behind an account key (403).
 */
export async function authenticate(
  operation: Pick<Operation, "method" | "path" | "audience">,
  headers: AuthHeaders,
  clientIp: string | null,
): Promise<{ principal: Principal; account: AccountRef | null }> {
  if (!headers.apiKey || !headers.apiSecret) {
    throw new AuthFailure(401, "Missing credentials: send X-API-Key and X-API-Secret");
  }
  await refreshAuthCache();
  const key = await findKey(headers.apiKey);
  if (!key || !secretMatches(headers.apiSecret, key.secretHash)) {
    throw new AuthFailure(401, "Invalid API key or secret");
  }
  if (!key.isEnabled) throw new AuthFailure(403, "This API key is disabled");
  if (!key.ownerEnabled) throw new AuthFailure(403, "This API key's admin is disabled");
  if (key.allowedAddresses && !(clientIp && addressMatches(key.allowedAddresses, clientIp))) {
    throw new AuthFailure(403, `This API key may not be used from ${clientIp ?? "an unknown address"}`);
  }
  if (key.allowedEndpoints && !key.allowedEndpoints.has(endpointOf(operation))) {
    throw new AuthFailure(403, `This API key may not call ${endpointOf(operation)}`);
  }
  if (!audienceScopes[operation.audience].includes(key.scope)) {
    throw new AuthFailure(403, `This operation needs ${operation.audience === "admin" ? "an admin" : "an admin or reseller"} API key`);
  }

  recordLastUse(key.id, clientIp);
  const principal: Principal = {
    keyId: key.id,
    scope: key.scope,
    resellerId: key.resellerId,
    accountId: key.accountId,
    adminUserId: key.ownerAdminId,
    clientIp,
  };
  if (operation.audience !== "client") return { principal, account: null };
  return { principal, account: await resolveAccount(key, headers.hostingAccount) };
}

const MAX_ACCOUNT_ID = 2147483647;

async function resolveAccount(key: CachedKey, header: string | null): Promise<AccountRef> {
  if (key.scope === "account") {
    const account = await findAccount(key.accountId!);
    if (!account) throw new AuthFailure(404, "Hosting account not found");
    if (account.status === "suspended") throw new AuthFailure(403, "This hosting account is suspended");
    return account;
  }
  const named = header?.trim();
  if (!named) {
    throw new AuthFailure(400, "Name the hosting account in the X-Hosting-Account header (id or username)");
  }
  const ref = /^[0-9]{1,10}$/.test(named) ? Number(named) : named.toLowerCase();
  // An id beyond int4 names no account (the query would fail on it rather than find nothing).
  const account = typeof ref === "number" && ref > MAX_ACCOUNT_ID ? null : await findAccount(ref);
  if (!account || (key.scope === "reseller" && account.resellerId !== key.resellerId)) {
    throw new AuthFailure(404, "Hosting account not found");
  }
  return account;
}

// last_used_at/last_used_ip: at most one write a minute per key and instance, and the UPDATE is
// conditional, so instances together still write about once a minute. Never awaited.
const LAST_USED_PERIOD_MS = 60_000;
const globalForLastUse = globalThis as unknown as { __panelKeyLastWrite?: Map<number, number> };
const lastWriteAt = (globalForLastUse.__panelKeyLastWrite ??= new Map());

function recordLastUse(keyId: number, clientIp: string | null) {
  const now = Date.now();
  if (now - (lastWriteAt.get(keyId) ?? 0) < LAST_USED_PERIOD_MS) return;
  if (lastWriteAt.size >= 10_000) lastWriteAt.clear();
  lastWriteAt.set(keyId, now);
  void connection()
    .then(({ db }) =>
      db
        .update(apiKeys)
        .set({ lastUsedAt: sql`now()`, lastUsedIp: clientIp, updatedAt: sql`${apiKeys.updatedAt}` })
        .where(
          and(
            eq(apiKeys.id, keyId),
            or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, sql`now() - interval '1 minute'`)),
          ),
        ),
    )
    .catch((error) => console.error("[auth] could not record last use of key", keyId, error));
}
