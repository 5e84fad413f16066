import { and, asc, count, eq, ilike, or } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { DEFAULT_PLAN_NAME } from "@/db/prepare";
import { customerDatabases, databaseUsers, domains, hostingAccounts, nodes, phpVersions, plans, resellers } from "@/db/schema";
import { applyAccountMailOf, settleMail } from "@/lib/email/service";
import { countAccountRecords } from "@/lib/dns/service";
import { env } from "@/lib/env";
import { syncZoneFile } from "@/lib/dns/zone-file-sync";
import { databaseSizesMb } from "@/lib/databases/service";
import { accountDiskUsage } from "@/lib/hosting/disk-usage";
import { webHostingEnabled } from "@/lib/provisioning/home-layout";
import { applyDiskQuotas, applySshAccess, assertPhpUsable, provisionAccount, syncAccountSites } from "@/lib/hosting/service";
import { quotaMountPoint } from "@/lib/provisioning/quota";
import { lockAccount } from "@/lib/accounts/lock";
import { mysqlProvisioner } from "@/lib/provisioning/mysql";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { requestAutoSslCheck } from "@/lib/autossl/job";
import { normalizeDomainName } from "@/lib/domains/names";
import { insertDomainWithZone } from "@/lib/domains/service";
import { notFound, pgErrorCode, validationError } from "@/lib/errors";
import { containsPattern, type ListPage, type ListQuery, listQuerySchema, paged } from "@/lib/list-query";
import { findPlanByName, toPlanRecord } from "@/lib/plans/service";
import { findResellerByUsername } from "@/lib/resellers/service";
import type { MailSettings } from "@/lib/email/schemas";
import { mailSettingsOf } from "@/lib/email/settings";
import { latestMoves } from "@/lib/moves/records";
import type { MoveRecord } from "@/lib/moves/schemas";
import { nodeSyncOf, type NodeSync } from "@/lib/nodes/dispatch";
import { type Host, hostOfAccount } from "@/lib/nodes/hosts";
import { nodeForNewAccount } from "@/lib/nodes/service";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { linuxGroupExists, linuxUserExists } from "@/lib/provisioning/passwd";
import { ADMIN, type AccountManager, managedBy } from "./manager";
import {
  type AccountListRow,
  type accountProfileFields,
  type listAccountsQuerySchema,
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
  node: { name: string } & NodeSync,
  move: MoveRecord | null,
  mailSettings: MailSettings,
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
    suspension_reason: account.suspensionReason,
    has_ssh_access: account.hasSshAccess,
    ssh: { host: env().sshHost, port: env().sshPort, username: account.username, shell: account.hasSshAccess },
    mail_settings: mailSettings,
    plan: toPlanRecord(plan),
    reseller_id: account.resellerId,
    node: node.name,
    node_sync: node.node_sync,
    node_error: node.node_error,
    move,
    created_at: account.createdAt.toISOString(),
    updated_at: account.updatedAt.toISOString(),
  };
}

function selectAccounts(db: Queryable) {
  return db
    .select()
    .from(hostingAccounts)
    .innerJoin(plans, eq(plans.id, hostingAccounts.planId))
    .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId));
}

type AccountRow = { hosting_accounts: typeof hostingAccounts.$inferSelect; plans: typeof plans.$inferSelect; nodes: typeof nodes.$inferSelect };

/** The records of `rows` (in their order), with each account's node and whether the node has done what was asked. */
async function toAccountRecords(db: Queryable, rows: AccountRow[]): Promise<HostingAccountRecord[]> {
  const ids = rows.map((row) => row.hosting_accounts.id);
  const [sync, moves, mail] = await Promise.all([nodeSyncOf(db, ids), latestMoves(db, ids), mailSettingsOf(db, rows.map((row) => row.hosting_accounts))]);
  return rows.map((row) => {
    const id = row.hosting_accounts.id;
    return toAccountRecord(row.hosting_accounts, row.plans, { name: row.nodes.name, ...sync.get(id)! }, moves.get(id) ?? null, mail.get(id)!);
  });
}

/** One account; outside the manager's set it is "not found", exactly as a missing one. */
export async function getAccount(
  db: Queryable,
  accountId: number,
  manager: AccountManager = ADMIN,
): Promise<HostingAccountRecord> {
  const [row] = await selectAccounts(db).where(and(eq(hostingAccounts.id, accountId), managedBy(manager)));
  if (!row) throw notFound("Hosting account");
  return (await toAccountRecords(db, [row]))[0];
}

/** The manager's accounts by username, searched and filtered by status (GET /api/admin/accounts, CLI, key form). */
export async function listManagedAccounts(
  db: Queryable,
  manager: AccountManager,
  query: z.output<typeof listAccountsQuerySchema>,
): Promise<HostingAccountRecord[]> {
  const rows = await selectAccounts(db)
    .where(and(managedBy(manager), searchCondition(query.search), query.status && eq(hostingAccounts.status, query.status)))
    .orderBy(asc(hostingAccounts.username));
  return toAccountRecords(db, rows);
}

/** Username, domain or email containing `search`, case-insensitively. */
function searchCondition(search: string | undefined) {
  if (!search) return undefined;
  const pattern = containsPattern(search);
  return or(ilike(hostingAccounts.username, pattern), ilike(hostingAccounts.domain, pattern), ilike(hostingAccounts.email, pattern));
}

/** The admin list: searched by username, domain or email, of one status when given, paged, with each account's reseller. */
export async function listAccountsPage(db: Queryable, query: ListQuery, status?: "active" | "suspended"): Promise<ListPage<AccountListRow>> {
  const { search, ...window } = listQuerySchema.parse(query);
  const where = and(searchCondition(search), status ? eq(hostingAccounts.status, status) : undefined);
  const rowsQuery = selectAccounts(db)
    .leftJoin(resellers, eq(resellers.id, hostingAccounts.resellerId))
    .where(where)
    .orderBy(asc(hostingAccounts.username))
    .$dynamic();
  const [rows, [{ total }]] = await Promise.all([
    paged(rowsQuery, window),
    db.select({ total: count() }).from(hostingAccounts).where(where),
  ]);
  const records = await toAccountRecords(db, rows);
  return {
    rows: records.map((record, index) => ({ ...record, reseller_username: rows[index].resellers?.username ?? null })),
    total,
  };
}

/**
 * Creates an account with its main domain (type `domain`) and that domain's zone, atomically;
 * with web hosting on, also its Linux user, home and site, as the transaction's last step (undone
 * if the commit fails). A reseller's account is its own; only an admin names another reseller.
 */
export async function createAccount(
  db: Database,
  input: CreateAccountInput,
  actor: Actor,
  manager: AccountManager = ADMIN,
): Promise<HostingAccountRecord> {
  const { username, domain: domainInput, plan: planName, reseller: resellerName, node: nodeName, email, ...profile } =
    createAccountSchema.parse(input);
  if (resellerName !== undefined && manager.kind === "reseller") throw validationError("reseller", ONLY_ADMINS);
  if (nodeName !== undefined && manager.kind === "reseller") throw validationError("node", ONLY_ADMINS);
  const domain = normalizeDomainName(domainInput);
  if (!domain) throw validationError("domain", "is not a valid domain name");
  let undoProvisioning: (() => Promise<void>) | null = null;
  const created = await db.transaction(async (tx) => {
    const plan = await findPlanByName(tx, planName ?? DEFAULT_PLAN_NAME);
    if (!plan) throw validationError("plan", `names no plan ("${planName}")`);
    const resellerId = manager.kind === "reseller" ? manager.resellerId : await resellerIdOf(tx, resellerName ?? null);
    const node = await nodeForNewAccount(tx, nodeName);
    // The panel's own machine's users and groups, when the account lives here. On every machine,
    // `local` too, the node itself refuses a name that exists there without the panel's mark
    // (lib/provisioning/marks.ts): 422 at username from its account.provision.
    if (node.name === LOCAL_NODE) await refuseLocalSystemName(username);
    let account: typeof hostingAccounts.$inferSelect;
    try {
      [account] = await tx
        .insert(hostingAccounts)
        .values({ ...profileColumns(profile), username, domain, email: email ?? null, planId: plan.id, resellerId, nodeId: node.id })
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
      details: { username: account.username, domain, plan: plan.name, reseller_id: resellerId },
    });
    undoProvisioning = await provisionAccount(tx, account.id);
    // Its site's PHP may send as its domain from the start (docs/email.md "PHP's mail()").
    const settleMs = await applyAccountMailOf(tx, account.id);
    return { accountId: account.id, domainId: domainRow.id, settleMs };
  }).catch(async (error) => {
    await undoProvisioning?.();
    throw error;
  });
  await settleMail(created.settleMs);
  await syncZoneFile(db, created.domainId);
  if (profile.is_auto_ssl_enabled) requestAutoSslCheck();
  return getAccount(db, created.accountId);
}

/**
 * A Linux user or group of the panel's machine is reserved for an account there (even without
 * SYSTEM_USERS): useradd --user-group makes a group of the username, and an existing one (sudo,
 * docker) would either stop it or, worse, hand the account that group's rights.
 */
async function refuseLocalSystemName(username: string): Promise<void> {
  if (await linuxUserExists(username)) throw validationError("username", "is reserved by the server (a system user)");
  if (await linuxGroupExists(username)) throw validationError("username", "is reserved by the server (a system group)");
}

export async function findAccountIdByUsername(db: Queryable, username: string): Promise<number | null> {
  const [row] = await db
    .select({ id: hostingAccounts.id })
    .from(hostingAccounts)
    .where(eq(hostingAccounts.username, username.trim().toLowerCase()));
  return row?.id ?? null;
}

const ONLY_ADMINS = "can only be set by an administrator";

/** The id of the reseller named `username` (null: none); an unknown name is a 422 at `reseller`. */
async function resellerIdOf(db: Queryable, username: string | null): Promise<number | null> {
  if (username === null) return null;
  const reseller = await findResellerByUsername(db, username);
  if (!reseller) throw validationError("reseller", `names no reseller ("${username}")`);
  return reseller.id;
}

type ProfileFields = Partial<Pick<z.output<typeof updateAccountAdminSchema>, keyof typeof accountProfileFields>>;

/** Profile fields of the API (snake_case) as columns; fields left out stay out. */
function profileColumns({ is_auto_ssl_enabled: isAutoSslEnabled, ...profile }: ProfileFields) {
  return Object.fromEntries(
    Object.entries({ ...profile, isAutoSslEnabled }).filter(([, value]) => value !== undefined),
  ) as Partial<typeof hostingAccounts.$inferInsert>;
}

/**
 * Changes an account as its manager (admin UI, PUT /api/admin/accounts/{id}): plan, reseller
 * (admins only), SSH access, email and profile. Only changed columns are written and audited; a
 * change of reseller bumps auth_generation (trigger, migration 0004), so a reseller key loses
 * the account on its very next request on every instance. Suspension has its own service
 * (lib/accounts/lifecycle.ts): it also acts on the servers.
 */
export async function updateAccountAdminFields(
  db: Database,
  accountId: number,
  input: UpdateAccountAdminInput,
  actor: Actor,
  manager: AccountManager = ADMIN,
): Promise<HostingAccountRecord> {
  const { plan: planName, reseller: resellerName, has_ssh_access: hasSshAccess, email, ...profile } =
    updateAccountAdminSchema.parse(input);
  if (resellerName !== undefined && manager.kind === "reseller") throw validationError("reseller", ONLY_ADMINS);
  await db.transaction(async (tx) => {
    const [current] = await tx
      .select()
      .from(hostingAccounts)
      .where(and(eq(hostingAccounts.id, accountId), managedBy(manager)))
      .for("update");
    if (!current) throw notFound("Hosting account");
    const next: Partial<typeof hostingAccounts.$inferInsert> = { ...profileColumns(profile), hasSshAccess, email };
    if (planName !== undefined) {
      const plan = await findPlanByName(tx, planName);
      if (!plan) throw validationError("plan", `names no plan ("${planName}")`);
      next.planId = plan.id;
    }
    if (resellerName !== undefined) next.resellerId = await resellerIdOf(tx, resellerName);
    const changed = Object.fromEntries(
      Object.entries(next).filter(
        ([column, value]) => value !== undefined && current[column as keyof typeof current] !== value,
      ),
    ) as Partial<typeof hostingAccounts.$inferInsert>;
    if (Object.keys(changed).length === 0) return;
    await tx.update(hostingAccounts).set(changed).where(eq(hostingAccounts.id, accountId));
    if (changed.hasSshAccess !== undefined) await applySshAccess(tx, accountId, current.username, changed.hasSshAccess);
    // A new plan's PHP caps: the pools and sites follow in this transaction (lib/php-settings/rows.ts).
    if (changed.planId !== undefined) await syncAccountSites(tx, accountId);
    // And its sending limits: the account's machine counts against the new plan's (docs/email.md "Sending limits").
    if (changed.planId !== undefined) await applyAccountMailOf(tx, accountId);
    await recordAudit(tx, actor, {
      action: "hosting_account.update",
      targetType: "hosting_account",
      targetId: accountId,
      details: Object.fromEntries(
        Object.entries(changed).map(([column, value]) => [column, { from: current[column as keyof typeof current], to: value }]),
      ),
    });
  });
  if (profile.is_auto_ssl_enabled) requestAutoSslCheck();
  // A new plan's disk_mb as the Linux user's quota (where quotas are on).
  if (planName !== undefined) await applyDiskQuotas(db, { accountId });
  return getAccount(db, accountId);
}

/** PUT /api/client/account: the profile fields and the auto-SSL toggle, nothing else. */
export async function updateAccountProfile(
  db: Database,
  accountId: number,
  patch: z.output<typeof updateAccountProfileSchema>,
): Promise<HostingAccountRecord> {
  if (Object.keys(patch).length > 0) {
    const updated = await db
      .update(hostingAccounts)
      .set(profileColumns(patch))
      .where(eq(hostingAccounts.id, accountId))
      .returning({ id: hostingAccounts.id });
    if (updated.length === 0) throw notFound("Hosting account");
  }
  if (patch.is_auto_ssl_enabled) requestAutoSslCheck();
  return getAccount(db, accountId);
}

/** POST /api/client/account/configure-php: the PHP version (and PHP-FPM) of one owned domain. */
export async function configurePhp(
  db: Database,
  accountId: number,
  input: z.output<typeof configurePhpBodySchema>,
): Promise<{ message: string }> {
  return db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
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
      // Choosing a version turns PHP on unless the request says otherwise: one request enables PHP.
      .set({ phpVersionId: php.id, isPhpFpmEnabled: input.is_php_fpm_enabled ?? true })
      .where(eq(domains.id, domain.id));
    await syncAccountSites(tx, accountId);
    return { message: `PHP version of ${domain.domain} updated to ${php.version}` };
  });
}

/** A home's measured size (null: unknown) against its plan, and when it was measured. */
const diskUsage = (measured: { mb: number; at: number } | null, limitMb: number | null) => ({
  used_mb: measured?.mb ?? null,
  limit_mb: limitMb,
  over_limit: measured !== null && limitMb !== null && measured.mb > limitMb,
  measured_at: measured ? new Date(measured.at).toISOString() : null,
});

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
  const sizesMb = await databaseSizesMb(db, accountId, databases.map((database) => database.name));
  const host = await hostOfAccount(db, accountId);
  return {
    domains: { used: await countOf(domains), limit: account.plan.max_domains },
    databases: { used: databases.length, limit: account.plan.max_databases },
    database_users: { used: await countOf(databaseUsers), limit: account.plan.max_database_users },
    dns_records: { used: await countAccountRecords(db, accountId), limit: account.plan.max_dns_records },
    // The measured size of the home; null (unknown, never invented) when the panel keeps no homes.
    disk: host.local
      ? { ...diskUsage(await accountDiskUsage(account.username), account.plan.disk_mb), enforced: (await quotaMountPoint()) !== null }
      : await remoteDiskUsage(host, account.username, account.plan.disk_mb),
    // Real sizes from the database server; null when provisioning is off or the server is down.
    database_sizes: sizesMb
      ? databases.map((database) => ({
          id: database.id,
          database_name: database.name,
          size_mb: sizesMb.get(database.name) ?? 0,
        }))
      : null,
    provisioning: host.local ? { databases: mysqlProvisioner() !== null, web: webHostingEnabled() } : { databases: sizesMb !== null, web: true },
  };
}

/**
 * The home's size on the account's node, measured there as it answers (so measured now); unknown
 * (null) while the node does not answer.
 */
async function remoteDiskUsage(host: Host, username: string, limitMb: number | null) {
  const measured = await host.run("account.disk-usage", { username }).catch(() => null);
  return {
    ...diskUsage(measured && measured.mb !== null ? { mb: measured.mb, at: Date.now() } : null, limitMb),
    enforced: measured?.enforced ?? false,
  };
}

/** GET /api/client/account/visitor-stats: `domain` must be the account's (else 404). */
export async function visitorStats(db: Queryable, account: { id: number; username: string }, domain?: string) {
  const host = await hostOfAccount(db, account.id);
  if (domain === undefined) return host.run("visitors.report", { username: account.username, domain: null });
  const name = normalizeDomainName(domain);
  const [owned] = name
    ? await db.select({ domain: domains.domain }).from(domains).where(and(eq(domains.accountId, account.id), eq(domains.domain, name)))
    : [];
  if (!owned) throw notFound("Domain");
  return host.run("visitors.report", { username: account.username, domain: owned.domain });
}
