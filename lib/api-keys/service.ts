import { asc, count, desc, eq, like, or, type SQL, sql } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { adminUsers, apiKeys, hostingAccounts, resellers } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { notFound, validationError } from "@/lib/errors";
import { containsPattern, paged } from "@/lib/list-query";
import {
  type ApiKeyListQuery,
  type ApiKeyRecord,
  apiKeyListQuerySchema,
  type CreateApiKeyInput,
  type CreatedApiKey,
  createApiKeySchema,
  type UpdateApiKeyInput,
  updateApiKeySchema,
} from "./schemas";
import { endpointsRefusedFor } from "./endpoints";
import { withoutMask } from "./search-terms";
import { maskSecret, newApiKeyToken, newApiSecret, SECRET_START_LENGTH, sha256Hex } from "./tokens";

const recordColumns = {
  id: apiKeys.id,
  name: apiKeys.name,
  key: apiKeys.key,
  secretStart: apiKeys.secretStart,
  scope: apiKeys.scope,
  resellerId: apiKeys.resellerId,
  resellerUsername: resellers.username,
  accountId: apiKeys.accountId,
  accountUsername: hostingAccounts.username,
  ownerEmail: adminUsers.email,
  isEnabled: apiKeys.isEnabled,
  allowedIps: apiKeys.allowedIps,
  allowAllEndpoints: apiKeys.allowAllEndpoints,
  allowedEndpoints: apiKeys.allowedEndpoints,
  lastUsedAt: apiKeys.lastUsedAt,
  lastUsedIp: apiKeys.lastUsedIp,
  createdAt: apiKeys.createdAt,
  updatedAt: apiKeys.updatedAt,
};

type RecordRow = {
  [K in keyof typeof recordColumns]: (typeof recordColumns)[K]["_"]["data"] | null;
};

function toRecord(row: RecordRow): ApiKeyRecord {
  return {
    id: row.id!,
    name: row.name!,
    key: row.key!,
    secret_masked: maskSecret(row.secretStart!),
    scope: row.scope!,
    reseller_id: row.resellerId,
    reseller_username: row.resellerUsername,
    account_id: row.accountId,
    account_username: row.accountUsername,
    owner_email: row.ownerEmail,
    is_enabled: row.isEnabled!,
    allowed_ips: row.allowedIps!,
    allow_all_endpoints: row.allowAllEndpoints!,
    allowed_endpoints: row.allowedEndpoints!,
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    last_used_ip: row.lastUsedIp,
    created_at: row.createdAt!.toISOString(),
    updated_at: row.updatedAt!.toISOString(),
  };
}

function selectRecords(db: Queryable) {
  return db
    .select(recordColumns)
    .from(apiKeys)
    .leftJoin(resellers, eq(resellers.id, apiKeys.resellerId))
    .leftJoin(hostingAccounts, eq(hostingAccounts.id, apiKeys.accountId))
    .leftJoin(adminUsers, eq(adminUsers.id, apiKeys.ownerAdminId));
}

async function assertScopeTargetExists(
  db: Queryable,
  target: { scope?: string; reseller_id?: number | null; account_id?: number | null },
) {
  if (target.scope === "reseller" && target.reseller_id) {
    const [row] = await db.select({ id: resellers.id }).from(resellers).where(eq(resellers.id, target.reseller_id));
    if (!row) throw validationError("reseller_id", "names no reseller");
  }
  if (target.scope === "account" && target.account_id) {
    const [row] = await db
      .select({ id: hostingAccounts.id })
      .from(hostingAccounts)
      .where(eq(hostingAccounts.id, target.account_id));
    if (!row) throw validationError("account_id", "names no hosting account");
  }
}

/**
 * The admin an admin key belongs to: the admin making it (or making it an admin key); on the
 * command line, the admin named with --owner, else none. An admin never makes a key that belongs
 * to another admin: SSO would sign them in as that admin.
 */
const ownerOf = (scope: string, actor: Actor, commandLineOwner: number | null) =>
  scope !== "admin" ? null : actor.type === "admin_user" ? actor.id : commandLineOwner;

/**
 * Creates a key; the returned `secret` exists nowhere else, ever. `ownerAdminId`: for keys made
 * outside an admin's session (the command line), the admin an admin key belongs to.
 */
export async function createApiKey(
  db: Database,
  input: CreateApiKeyInput,
  actor: Actor,
  { ownerAdminId = null }: { ownerAdminId?: number | null } = {},
): Promise<CreatedApiKey> {
  const fields = createApiKeySchema.parse(input);
  const key = newApiKeyToken();
  const secret = newApiSecret();
  const id = await db.transaction(async (tx) => {
    await assertScopeTargetExists(tx, fields);
    const [created] = await tx
      .insert(apiKeys)
      .values({
        name: fields.name,
        key,
        secretHash: sha256Hex(secret),
        secretStart: secret.slice(0, SECRET_START_LENGTH),
        scope: fields.scope,
        resellerId: fields.scope === "reseller" ? fields.reseller_id : null,
        accountId: fields.scope === "account" ? fields.account_id : null,
        ownerAdminId: ownerOf(fields.scope, actor, ownerAdminId),
        isEnabled: fields.is_enabled,
        allowedIps: fields.allowed_ips,
        allowAllEndpoints: fields.allow_all_endpoints,
        allowedEndpoints: fields.allow_all_endpoints ? [] : fields.allowed_endpoints,
      })
      .returning({ id: apiKeys.id });
    await recordAudit(tx, actor, {
      action: "api_key.create",
      targetType: "api_key",
      targetId: created.id,
      details: { name: fields.name, scope: fields.scope },
    });
    return created.id;
  });
  return { ...(await getApiKey(db, id)), secret };
}

export async function getApiKey(db: Queryable, id: number): Promise<ApiKeyRecord> {
  const [row] = await selectRecords(db).where(eq(apiKeys.id, id));
  if (!row) throw notFound("API key");
  return toRecord(row);
}

/**
 * What the list's search box matches: the name and the key (search_text), and the secret as the
 * list shows it, its first characters (a masked secret pasted from the list is searched by those).
 */
function searchCondition(search: string): SQL | undefined {
  const term = withoutMask(search).toLowerCase();
  if (!term) return undefined;
  // search_text is name and key lower-cased (db/schema/api-keys.ts): a LIKE over it, not ILIKE.
  return or(like(apiKeys.searchText, containsPattern(term)), like(sql`lower(${apiKeys.secretStart})`, containsPattern(term)));
}

async function listWhere(db: Queryable, where: SQL | undefined, window: { page: number; per_page: number }) {
  const [rows, [{ total }]] = await Promise.all([
    paged(selectRecords(db).where(where).orderBy(desc(apiKeys.createdAt), desc(apiKeys.id)).$dynamic(), window),
    db.select({ total: count() }).from(apiKeys).where(where),
  ]);
  return { rows: rows.map(toRecord), total };
}

/**
 * The admin list: newest first, one search over name, key and the secret's visible start.
 * `per_page` 0 lists all. A full secret is never matched here: this is what a URL carries.
 */
export async function listApiKeys(
  db: Queryable,
  query: ApiKeyListQuery,
): Promise<{ rows: ApiKeyRecord[]; total: number }> {
  const { search, ...window } = apiKeyListQuerySchema.parse(query);
  return listWhere(db, searchCondition(search), window);
}

/**
 * The search of a term that may hold a secret (lib/api-keys/search-terms.ts), which the list
 * sends by POST, never in a URL: every key it matches as the list search would, and the key
 * whose secret it is, if any (by the secret's hash; the secret itself is stored nowhere).
 */
export async function searchApiKeysBySecret(
  db: Queryable,
  term: string,
): Promise<{ rows: ApiKeyRecord[]; total: number; secretOf: { id: number; name: string } | null }> {
  const secret = term.trim().slice(0, 200);
  const bySecret = eq(apiKeys.secretHash, sha256Hex(secret));
  const { rows, total } = await listWhere(db, or(bySecret, searchCondition(secret)), { page: 1, per_page: 0 });
  const [owner] = await db.select({ id: apiKeys.id, name: apiKeys.name }).from(apiKeys).where(bySecret);
  return { rows, total, secretOf: owner ?? null };
}

/** Every key's id and name (tens of keys): the form warns when a name is already taken. */
export async function listApiKeyNames(db: Queryable): Promise<{ id: number; name: string }[]> {
  return db.select({ id: apiKeys.id, name: apiKeys.name }).from(apiKeys).orderBy(asc(apiKeys.name));
}

/** Partial update; revocation (disable, restriction edit) reaches every instance at once. */
export async function updateApiKey(
  db: Database,
  id: number,
  input: UpdateApiKeyInput,
  actor: Actor,
): Promise<ApiKeyRecord> {
  const patch = updateApiKeySchema.parse(input);
  await db.transaction(async (tx) => {
    const [current] = await tx.select().from(apiKeys).where(eq(apiKeys.id, id)).for("update");
    if (!current) throw notFound("API key");
    const scope = patch.scope ?? current.scope;
    const target = {
      scope,
      reseller_id: scope === "reseller" ? (patch.reseller_id ?? current.resellerId) : null,
      account_id: scope === "account" ? (patch.account_id ?? current.accountId) : null,
    };
    if (scope === "reseller" && !target.reseller_id) throw validationError("reseller_id", "is required");
    if (scope === "account" && !target.account_id) throw validationError("account_id", "is required");
    await assertScopeTargetExists(tx, target);
    const allowAll = patch.allow_all_endpoints ?? current.allowAllEndpoints;
    const endpoints = allowAll ? [] : (patch.allowed_endpoints ?? current.allowedEndpoints);
    if (!allowAll && endpoints.length === 0) {
      throw validationError("allowed_endpoints", "Select at least one endpoint, or allow all endpoints");
    }
    // The stored list against a changed scope too (the schema saw only what the patch holds).
    const refused = allowAll ? null : endpointsRefusedFor(scope, endpoints);
    if (refused) throw validationError("allowed_endpoints", refused);
    await tx
      .update(apiKeys)
      .set({
        name: patch.name,
        isEnabled: patch.is_enabled,
        allowedIps: patch.allowed_ips,
        allowAllEndpoints: allowAll,
        allowedEndpoints: endpoints,
        scope,
        resellerId: target.reseller_id,
        accountId: target.account_id,
        // An admin key keeps its owner; a key becoming one belongs to whoever makes it so.
        ownerAdminId: scope === current.scope ? current.ownerAdminId : ownerOf(scope, actor, null),
      })
      .where(eq(apiKeys.id, id));
    await recordAudit(tx, actor, {
      action: "api_key.update",
      targetType: "api_key",
      targetId: id,
      details: { fields: Object.keys(patch) },
    });
  });
  return getApiKey(db, id);
}

export const setApiKeyEnabled = (db: Database, id: number, enabled: boolean, actor: Actor) =>
  updateApiKey(db, id, { is_enabled: enabled }, actor);

export async function deleteApiKey(db: Database, id: number, actor: Actor): Promise<void> {
  await db.transaction(async (tx) => {
    const deleted = await tx.delete(apiKeys).where(eq(apiKeys.id, id)).returning({ name: apiKeys.name });
    if (deleted.length === 0) throw notFound("API key");
    await recordAudit(tx, actor, {
      action: "api_key.delete",
      targetType: "api_key",
      targetId: id,
      details: { name: deleted[0].name },
    });
  });
}
