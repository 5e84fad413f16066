import { and, asc, count, eq, ilike, or } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { DEFAULT_PLAN_NAME } from "@/db/prepare";
import { customerDatabases, databaseUsers, domains, hostingAccounts, phpVersions, plans, resellers } from "@/db/schema";
import { countAccountRecords } from "@/lib/dns/service";
import { syncZoneFile } from "@/lib/dns/zone-file-sync";
import { databaseSizesMb } from "@/lib/databases/service";
import { accountDiskUsageMb } from "@/lib/hosting/disk-usage";
import { applySshAccess, assertPhpUsable, assertUsernameFree, provisionAccount, syncAccountSites, webHostingEnabled } from "@/lib/hosting/service";
import { lockAccountPlan } from "@/lib/accounts/plan-lock";
import { combinedReport, domainReport } from "@/lib/provisioning/goaccess";
import { mysqlProvisioner } from "@/lib/provisioning/mysql";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { requestAutoSslCheck } from "@/lib/autossl/job";
import { normalizeDomainName } from "@/lib/domains/names";
import { insertDomainWithZone } from "@/lib/domains/service";
import { notFound, pgErrorCode, validationError } from "@/lib/errors";
import { containsPattern, type ListPage, type ListQuery, listQuerySchema, paged } from "@/lib/list-query";
import { findPlanByName, toPlanRecord } from "@/lib/plans/service";
import { findResellerByUsername } from "@/lib/resellers/service";
import {
  type AccountListRow,
  type CreateAccountInput,
  type configurePhpBodySchema,
  createAccountSchema,
  type HostingAccountRecord,
  type UpdateAccountAdminInput,
  updateAccountAdminSchema,
  type updateAccountProfileSchema,
} from "./schemas";

export function toAccountRecord(
  account: typeof hostingAccounts.$inferSelect,
  plan: typeof plans.$inferSelect,
): HostingAccountRecord {
  return {
    id: account.id,
    username: account.username,
    domain: account.domain,
    email: account.email,
    name: account.name,
    phone: account.phone,
    address: account.address,
    city: account.city,
    state: account.state,
    zip: account.zip,
    country: account.country,
    company: account.company,
    is_auto_ssl_enabled: account.isAutoSslEnabled,
    status: account.status,
    is_suspended: account.status === "suspended",
    has_ssh_access: account.hasSshAccess,
    plan: toPlanRecord(plan),
    reseller_id: account.resellerId,
    created_at: account.createdAt.toISOString(),
    updated_at: account.updatedAt.toISOString(),
  };
}

function selectAccounts(db: Queryable) {
  return db.select().from(hostingAccounts).innerJoin(plans, eq(plans.id, hostingAccounts.planId));
}

export async function getAccount(db: Queryable, accountId: number): Promise<HostingAccountRecord> {
  const [row] = await selectAccounts(db).where(eq(hostingAccounts.id, accountId));
  if (!row) throw notFound("Hosting account");
  return toAccountRecord(row.hosting_accounts, row.plans);
}

export async function listAccounts(db: Queryable): Promise<HostingAccountRecord[]> {
  const rows = await selectAccounts(db).orderBy(asc(hostingAccounts.username));
  return rows.map((row) => toAccountRecord(row.hosting_accounts, row.plans));
}

/** The admin list: searched by username, domain or email, paged, with each account's reseller. */
export async function listAccountsPage(db: Queryable, query: ListQuery): Promise<ListPage<AccountListRow>> {
  const { search, ...window } = listQuerySchema.parse(query);
  const pattern = containsPattern(search);
  const where = search
    ? or(ilike(hostingAccounts.username, pattern), ilike(hostingAccounts.domain, pattern), ilike(hostingAccounts.email, pattern))
    : undefined;
  const rowsQuery = selectAccounts(db)
    .leftJoin(resellers, eq(resellers.id, hostingAccounts.resellerId))
    .where(where)
    .orderBy(asc(hostingAccounts.username))
    .$dynamic();
  const [rows, [{ total }]] = await Promise.all([
    paged(rowsQuery, window),
    db.select({ total: count() }).from(hostingAccounts).where(where),
  ]);
  return {
    rows: rows.map((row) => ({
      ...toAccountRecord(row.hosting_accounts, row.plans),
      reseller_username: row.resellers?.username ?? null,
    })),
    total,
  };
}

/**
 * Creates an account with its main domain (type `domain`) and that domain's zone, atomically;
 * with web hosting on, also its Linux user, home and site, as the transaction's last step (undone
 * if the commit fails).
 */
export async function createAccount(
  db: Database,
  input: CreateAccountInput,
  actor: Actor,
): Promise<HostingAccountRecord> {
  const fields = createAccountSchema.parse(input);
  const domain = normalizeDomainName(fields.domain);
  if (!domain) throw validationError("domain", "is not a valid domain name");
  await assertUsernameFree(fields.username);
  let undoProvisioning: (() => Promise<void>) | null = null;
  const created = await db.transaction(async (tx) => {
    const plan = await findPlanByName(tx, fields.plan ?? DEFAULT_PLAN_NAME);
    if (!plan) throw validationError("plan", `names no plan ("${fields.plan}")`);
    const reseller = fields.reseller ? await findResellerByUsername(tx, fields.reseller) : null;
    if (fields.reseller && !reseller) throw validationError("reseller", `names no reseller ("${fields.reseller}")`);
    let account: typeof hostingAccounts.$inferSelect;
    try {
      [account] = await tx
        .insert(hostingAccounts)
        .values({
          username: fields.username,
          domain,
          email: fields.email ?? null,
          planId: plan.id,
          resellerId: reseller?.id ?? null,
        })
        .returning();
    } catch (error) {
      if (pgErrorCode(error) === "23505") throw validationError("username", "is already taken");
      throw error;
    }
    const domainRow = await insertDomainWithZone(tx, {
      accountId: account.id,
      domain,
      domainType: "domain",
      domainPath: "public_html",
    });
    await recordAudit(tx, actor, {
      action: "hosting_account.create",
      targetType: "hosting_account",
      targetId: account.id,
      details: { username: account.username, domain },
    });
    undoProvisioning = await provisionAccount(tx, account.id);
    return { accountId: account.id, domainId: domainRow.id };
  }).catch(async (error) => {
    await undoProvisioning?.();
    throw error;
  });
  await syncZoneFile(db, created.domainId);
  return getAccount(db, created.accountId);
}

export async function findAccountIdByUsername(db: Queryable, username: string): Promise<number | null> {
  const [row] = await db
    .select({ id: hostingAccounts.id })
    .from(hostingAccounts)
    .where(eq(hostingAccounts.username, username.trim().toLowerCase()));
  return row?.id ?? null;
}

/**
 * The admin-only fields (admin UI): plan, reseller, SSH access, status. Only changed columns are
 * written; a change of status or reseller bumps auth_generation (trigger, migration 0004), so a
 * suspension stops the account's own keys on the very next request on every instance.
 */
export async function updateAccountAdminFields(
  db: Database,
  accountId: number,
  input: UpdateAccountAdminInput,
  actor: Actor,
): Promise<HostingAccountRecord> {
  const patch = updateAccountAdminSchema.parse(input);
  await db.transaction(async (tx) => {
    const [current] = await tx.select().from(hostingAccounts).where(eq(hostingAccounts.id, accountId)).for("update");
    if (!current) throw notFound("Hosting account");
    const next = { planId: current.planId, resellerId: current.resellerId, hasSshAccess: current.hasSshAccess, status: current.status };
    if (patch.plan !== undefined) {
      const plan = await findPlanByName(tx, patch.plan);
      if (!plan) throw validationError("plan", `names no plan ("${patch.plan}")`);
      next.planId = plan.id;
    }
    if (patch.reseller !== undefined) {
      const reseller = patch.reseller === null ? null : await findResellerByUsername(tx, patch.reseller);
      if (patch.reseller !== null && !reseller) throw validationError("reseller", `names no reseller ("${patch.reseller}")`);
      next.resellerId = reseller?.id ?? null;
    }
    if (patch.has_ssh_access !== undefined) next.hasSshAccess = patch.has_ssh_access;
    if (patch.status !== undefined) next.status = patch.status;
    const changed = Object.fromEntries(
      Object.entries(next).filter(([column, value]) => current[column as keyof typeof next] !== value),
    ) as Partial<typeof next>;
    if (Object.keys(changed).length === 0) return;
    await tx.update(hostingAccounts).set(changed).where(eq(hostingAccounts.id, accountId));
    if (changed.hasSshAccess !== undefined) await applySshAccess(current.username, changed.hasSshAccess);
    if (changed.status !== undefined) await syncAccountSites(tx, accountId);
    await recordAudit(tx, actor, {
      action: "hosting_account.update",
      targetType: "hosting_account",
      targetId: accountId,
      details: Object.fromEntries(
        Object.entries(changed).map(([column, value]) => [column, { from: current[column as keyof typeof next], to: value }]),
      ),
    });
  });
  return getAccount(db, accountId);
}

/** PUT /api/client/account: the profile fields and the auto-SSL toggle, nothing else. */
export async function updateAccountProfile(
  db: Database,
  accountId: number,
  patch: z.output<typeof updateAccountProfileSchema>,
): Promise<HostingAccountRecord> {
  const { is_auto_ssl_enabled: isAutoSslEnabled, ...profile } = patch;
  if (Object.keys(patch).length > 0) {
    const updated = await db
      .update(hostingAccounts)
      .set({ ...profile, isAutoSslEnabled })
      .where(eq(hostingAccounts.id, accountId))
      .returning({ id: hostingAccounts.id });
    if (updated.length === 0) throw notFound("Hosting account");
  }
  if (isAutoSslEnabled) requestAutoSslCheck();
  return getAccount(db, accountId);
}

/** POST /api/client/account/configure-php: the PHP version (and PHP-FPM) of one owned domain. */
export async function configurePhp(
  db: Database,
  accountId: number,
  input: z.output<typeof configurePhpBodySchema>,
): Promise<{ message: string }> {
  return db.transaction(async (tx) => {
    await lockAccountPlan(tx, accountId);
    const [domain] = await tx
      .select({ id: domains.id, domain: domains.domain })
      .from(domains)
      .where(and(eq(domains.id, input.domain_id), eq(domains.accountId, accountId)));
    if (!domain) throw notFound("Domain");
    const [php] = await tx.select().from(phpVersions).where(eq(phpVersions.id, input.php_version_id));
    if (!php) throw validationError("php_version_id", "names no installed PHP version");
    await assertPhpUsable(php.version);
    await tx
      .update(domains)
      .set({ phpVersionId: php.id, isPhpFpmEnabled: input.is_php_fpm_enabled })
      .where(eq(domains.id, domain.id));
    await syncAccountSites(tx, accountId);
    return { message: `PHP version of ${domain.domain} updated to ${php.version}` };
  });
}

/** GET /api/client/account/usage-details: what the account uses against its plan. */
export async function getUsageDetails(db: Queryable, accountId: number) {
  const account = await getAccount(db, accountId);
  const countOf = async (table: typeof domains | typeof customerDatabases | typeof databaseUsers) => {
    const [{ total }] = await db.select({ total: count() }).from(table).where(eq(table.accountId, accountId));
    return total;
  };
  const databases = await db
    .select({ id: customerDatabases.id, name: customerDatabases.databaseName })
    .from(customerDatabases)
    .where(eq(customerDatabases.accountId, accountId))
    .orderBy(asc(customerDatabases.id));
  const sizesMb = await databaseSizesMb(databases.map((database) => database.name));
  return {
    domains: { used: await countOf(domains), limit: account.plan.max_domains },
    databases: { used: databases.length, limit: account.plan.max_databases },
    database_users: { used: await countOf(databaseUsers), limit: account.plan.max_database_users },
    dns_records: { used: await countAccountRecords(db, accountId), limit: account.plan.max_dns_records },
    // The measured size of the home; null (unknown, never invented) when the panel keeps no homes.
    disk: { used_mb: await accountDiskUsageMb(account.username), limit_mb: account.plan.disk_mb },
    // Real sizes from the database server; null when provisioning is off or the server is down.
    database_sizes: sizesMb
      ? databases.map((database) => ({
          id: database.id,
          database_name: database.name,
          size_mb: sizesMb.get(database.name) ?? 0,
        }))
      : null,
    provisioning: { databases: mysqlProvisioner() !== null, web: webHostingEnabled() },
  };
}

/** GET /api/client/account/visitor-stats: `domain` must be the account's (else 404). */
export async function visitorStats(db: Queryable, account: { id: number; username: string }, domain?: string) {
  if (domain === undefined) return combinedReport(account.username);
  const name = normalizeDomainName(domain);
  const [owned] = name
    ? await db.select({ domain: domains.domain }).from(domains).where(and(eq(domains.accountId, account.id), eq(domains.domain, name)))
    : [];
  if (!owned) throw notFound("Domain");
  return domainReport(account.username, owned.domain);
}
