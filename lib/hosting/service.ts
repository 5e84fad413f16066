import { and, eq, inArray } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { customerDatabases, databaseUsers, domains, hostingAccounts, mailDomains, nodes, phpVersions, plans } from "@/db/schema";
import { siteNames } from "@/lib/domains/names";
import { mailHostOf } from "@/lib/provisioning/rules";
import { env } from "@/lib/env";
import { queueOnNode } from "@/lib/nodes/dispatch";
import { hostOfAccount, hostOfNode } from "@/lib/nodes/hosts";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import type { HostedAccount, Provisioned } from "@/lib/provisioning/hosting";
import { applyAllSites } from "@/lib/provisioning/hosting";
import { webHostingEnabled } from "@/lib/provisioning/home-layout";
import { writeLogrotateRules } from "@/lib/provisioning/logrotate";
import { adoptLegacyUsers } from "@/lib/provisioning/marks";
import { createMysqlProvisioner } from "@/lib/provisioning/mysql";
import { ensureLinkProtection } from "@/lib/provisioning/nginx";
import { assertPhpInstalled } from "@/lib/provisioning/php-fpm";
import { quotaMountPoint } from "@/lib/provisioning/quota";
import { phpSettingsOf } from "@/lib/php-settings/rows";

// Web hosting (DESIGN.md "Web hosting"): what the database says each account's sites, PHP
// pools, home and Linux user must be, as plain values (HostedAccount) handed to the machine that
// hosts the account — the panel's own (`local`) or a node (lib/nodes/hosts.ts), which makes them
// into files with lib/provisioning/hosting.ts. Every function that writes reads its rows through
// the caller's transaction and holds the account's row lock (the caller's), so two changes of one
// account never write from different snapshots.

/**
 * The hosting of the given accounts (all when `accountIds` is undefined), from the database:
 * their served domains with the names parked on them (and their mail domains' host names),
 * PHP versions, profiles and PHP settings.
 */
export async function hostedAccounts(db: Queryable, accountIds?: number[]): Promise<Map<number, HostedAccount>> {
  const accountRows = await db
    .select({ id: hostingAccounts.id, username: hostingAccounts.username, status: hostingAccounts.status })
    .from(hostingAccounts)
    .where(accountIds ? inArray(hostingAccounts.id, accountIds) : undefined)
    .orderBy(hostingAccounts.id);
  const rows = await db
    .select({
      id: domains.id,
      domain: domains.domain,
      type: domains.domainType,
      path: domains.domainPath,
      parkedOn: domains.parkedOnDomainId,
      fpm: domains.isPhpFpmEnabled,
      php: phpVersions.version,
      profile: domains.siteProfile,
      proxySocket: domains.proxySocket,
      accountId: domains.accountId,
    })
    .from(domains)
    .leftJoin(phpVersions, eq(phpVersions.id, domains.phpVersionId))
    .where(accountIds ? inArray(domains.accountId, accountIds) : undefined)
    .orderBy(domains.id);
  const parked = new Map<number, string[]>();
  for (const row of rows) if (row.parkedOn !== null) parked.set(row.parkedOn, [...(parked.get(row.parkedOn) ?? []), row.domain]);
  const mailHosts = await mailHostsBySite(db, rows, accountIds);
  const settings = await phpSettingsOf(db, accountRows.map((row) => row.id));
  const accounts = new Map<number, HostedAccount>(
    accountRows.map((row) => [row.id, { username: row.username, suspended: row.status === "suspended", php: settings.get(row.id)!, domains: [] }]),
  );
  for (const row of rows) {
    if (row.type === "parked") continue;
    accounts.get(row.accountId)?.domains.push({
      domain: row.domain,
      serverNames: [...siteNames(row.domain, row.type, parked.get(row.id) ?? []), ...(mailHosts.get(row.id) ?? [])],
      path: row.path ?? "public_html",
      profile: row.profile,
      // Only the php profile runs PHP; a static or proxied domain never reaches a pool.
      phpVersion: row.fpm && row.profile === "php" ? row.php : null,
      proxySocket: row.profile === "proxy" ? row.proxySocket : null,
    });
  }
  return accounts;
}

/**
 * The mail host names (`mail.<domain>`) each site answers too, by the site's domain id: a mail
 * domain's is answered by its own site, or by the site it is parked on — for AutoSSL's HTTP-01
 * challenge of the mail host's certificate (lib/autossl/service.ts; its A record is the apex's,
 * lib/email/service.ts). Not when a site of that name exists: it answers for itself.
 */
async function mailHostsBySite(db: Queryable, rows: { id: number; domain: string; parkedOn: number | null }[], accountIds?: number[]): Promise<Map<number, string[]>> {
  const mail = await db
    .select({ domainId: mailDomains.domainId, domain: mailDomains.domain })
    .from(mailDomains)
    .where(accountIds ? inArray(mailDomains.accountId, accountIds) : undefined);
  const names = new Set(rows.map((row) => row.domain));
  const siteOf = new Map(rows.map((row) => [row.id, row.parkedOn ?? row.id]));
  const hosts = new Map<number, string[]>();
  for (const { domainId, domain } of mail) {
    const host = mailHostOf(domain);
    const site = siteOf.get(domainId);
    if (site === undefined || names.has(host)) continue;
    hosts.set(site, [...(hosts.get(site) ?? []), host]);
  }
  return hosts;
}

/**
 * The account as a move's source holds it during the final pass (docs/nodes.md "Moving accounts"):
 * suspended — no login, no cron job, no mail login writes to the home being archived — its
 * incoming mail deferred (450: the senders try again, by then at the target), and its sites, by
 * MOVE_FINAL_PASS_SITES, answering reads (GET, HEAD) with every other method refused, or
 * suspended too.
 */
export const duringFinalPass = (account: HostedAccount): HostedAccount => ({ ...account, suspended: true, readOnly: env().moveFinalPassSites === "read-only", moving: true });

/** The account's hosting as the database says (`suspended`: the state being applied instead of the stored one). */
async function hostedAccount(db: Queryable, accountId: number, suspended?: boolean): Promise<HostedAccount | null> {
  const account = (await hostedAccounts(db, [accountId])).get(accountId);
  if (account && suspended !== undefined) account.suspended = suspended;
  return account ?? null;
}

/** Every PHP version the panel knows: a host removes the account's pools of those its domains no longer use. */
export async function knownPhpVersions(db: Queryable): Promise<string[]> {
  return (await db.select({ version: phpVersions.version }).from(phpVersions)).map((row) => row.version);
}

/**
 * (Re)writes every site and PHP pool of one account on its host: after a domain is added or
 * removed, PHP changes, the account is suspended or unsuspended. Throws 422 (and changes no
 * site) when nginx refuses the result. Call it inside the transaction of the change.
 */
export async function syncAccountSites(
  db: Queryable,
  accountId: number,
  options: { removedDomains?: string[]; suspended?: boolean } = {},
): Promise<void> {
  const account = await hostedAccount(db, accountId, options.suspended);
  if (!account) return;
  const host = await hostOfAccount(db, accountId);
  await host.run("sites.apply", { account, removedDomains: options.removedDomains ?? [], phpVersions: await knownPhpVersions(db) });
}

/**
 * The entry point for other parts of the panel (the ACME job after it wrote a certificate):
 * rewrites the site of one domain (a parked domain's is the site it is parked on) from the
 * database, with its certificate when CERTS_DIR has one.
 */
export async function syncDomainSite(db: Queryable, domainId: number): Promise<void> {
  const [row] = await db.select({ accountId: domains.accountId }).from(domains).where(eq(domains.id, domainId));
  if (row) await syncAccountSites(db, row.accountId);
}

/** Suspend (503 "suspended" page on every site of the account) or unsuspend (served again). */
export async function setAccountSitesSuspended(db: Queryable, accountId: number, suspended: boolean): Promise<void> {
  await syncAccountSites(db, accountId, { suspended });
}

/** Termination, first step: the account's sites and PHP pools go (its files stay until its home goes). */
export async function removeAccountSites(db: Queryable, accountId: number): Promise<void> {
  const account = await hostedAccount(db, accountId);
  if (!account) return;
  const host = await hostOfAccount(db, accountId);
  await host.run("sites.remove", { username: account.username, domains: account.domains.map((domain) => domain.domain), phpVersions: await knownPhpVersions(db) });
}

/**
 * A new account's Linux user, home and main site on its host, inside its creating transaction
 * (its rows are written, not committed). The host cleans up after itself when a step fails;
 * the answer is the undo for a commit that fails afterwards.
 */
export async function provisionAccount(db: Queryable, accountId: number): Promise<() => Promise<void>> {
  const [row] = await db
    .select({ ssh: hostingAccounts.hasSshAccess, diskMb: plans.diskMb })
    .from(hostingAccounts)
    .innerJoin(plans, eq(plans.id, hostingAccounts.planId))
    .where(eq(hostingAccounts.id, accountId));
  const account = (await hostedAccount(db, accountId))!;
  const host = await hostOfAccount(db, accountId);
  const made: Provisioned = await host.run("account.provision", { account, shell: row.ssh, diskMb: row.diskMb });
  return async () => {
    await host.run("account.unprovision", made);
  };
}

/** A new domain's document root and the account's sites, inside the domain's creating transaction. */
export async function provisionDomain(db: Queryable, domainId: number): Promise<void> {
  const [row] = await db
    .select({ accountId: domains.accountId, username: hostingAccounts.username, path: domains.domainPath })
    .from(domains)
    .innerJoin(hostingAccounts, eq(hostingAccounts.id, domains.accountId))
    .where(eq(domains.id, domainId));
  if (row.path !== null) await (await hostOfAccount(db, row.accountId)).run("domain.root", { username: row.username, path: row.path });
  await syncAccountSites(db, row.accountId);
}

/** 422 naming the version when the domain would use a PHP this server lacks (only when sites are served). */
export async function assertPhpUsable(version: string): Promise<void> {
  if (webHostingEnabled()) await assertPhpInstalled(version);
}

/** The admin's SSH toggle: the Linux user's login shell follows it, and with SSH_SERVER whether it is chrooted to SFTP. */
export async function applySshAccess(db: Queryable, accountId: number, username: string, hasSshAccess: boolean): Promise<void> {
  await (await hostOfAccount(db, accountId)).run("account.access", { username, shell: hasSshAccess });
}

/**
 * At start: every site written from the database, only files whose content changed (plus the
 * removal of files of domains no longer hosted), nginx tested and reloaded once, and only when
 * something changed; the pools likewise. A refused configuration is logged: the panel still
 * starts, and the sites keep their previous files.
 *
 * `whileTesting` (server.ts: the zone files) is started once, as `nginx -t` starts, or at the
 * end when there is no test; this resolves when both are done. At a first start both write
 * thousands of files: written at the same time they slow each other and the test starts later,
 * while the test, a process of its own, leaves the panel's files to themselves (10,000 domains:
 * 7.4–8.8 s against 9.0–16.4 s with both started together, on a loaded 2-core machine).
 */
export async function syncAllSites(db: Queryable, whileTesting: () => Promise<void> = async () => {}): Promise<void> {
  let alongside: Promise<void> | null = null;
  const startAlongside = () => void (alongside ??= whileTesting());
  try {
    if (webHostingEnabled()) {
      await ensureLinkProtection();
      await writeAllSites(db, startAlongside);
      await writeLogrotateRules();
    }
  } finally {
    startAlongside();
    await alongside;
  }
}

/**
 * The panel's own machine's sites (the accounts of `local`). A stored value a renderer refuses
 * (render-checks.ts) is logged, and that site or pool keeps the file it has: one bad row must not
 * keep the panel, or every other site, from starting.
 */
async function writeAllSites(db: Queryable, onTestStart: () => void): Promise<void> {
  const local = await db
    .select({ id: hostingAccounts.id })
    .from(hostingAccounts)
    .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
    .where(eq(nodes.name, LOCAL_NODE));
  const accounts = local.length ? await hostedAccounts(db, local.map((row) => row.id)) : new Map();
  await applyAllSites([...accounts.values()], onTestStart);
}

/**
 * At start, once per machine (lib/provisioning/marks.ts adoptLegacyUsers): the Linux users,
 * MariaDB databases and users of the accounts this machine (`local`) hosts, made before the panel
 * marked what it makes, get the mark; and the MariaDB server is claimed for `local`. A failure is
 * logged (tried again at the next start); the panel still starts.
 */
export async function adoptLocalMarks(db: Queryable): Promise<void> {
  // A provisioner of its own, closed after: the one mysqlProvisioner() keeps on globalThis must be
  // made by the route handlers' modules (server.ts has module instances of its own: its AppError is
  // not theirs).
  const { mysqlProvisionUrl, mysqlUserHost } = env();
  const server = mysqlProvisionUrl ? createMysqlProvisioner(mysqlProvisionUrl, mysqlUserHost) : null;
  try {
    await server?.claim();
    const local = await db
      .select({ id: hostingAccounts.id, username: hostingAccounts.username })
      .from(hostingAccounts)
      .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
      .where(eq(nodes.name, LOCAL_NODE));
    const ids = local.map((row) => row.id);
    const [databases, users] = ids.length
      ? await Promise.all([
          db.select({ name: customerDatabases.databaseName }).from(customerDatabases).where(inArray(customerDatabases.accountId, ids)),
          db.select({ name: databaseUsers.username }).from(databaseUsers).where(inArray(databaseUsers.accountId, ids)),
        ])
      : [[], []];
    await adoptLegacyUsers(
      local.map((row) => row.username),
      async () => server?.adopt(databases.map((row) => row.name), users.map((row) => row.name)),
    );
  } catch (error) {
    console.error("[marks] what the panel made before its marks could not be marked yet:", (error as Error).message);
  } finally {
    await server?.close();
  }
}

/**
 * The plan's disk_mb as the kernel quota of the accounts' Linux users (all, or those on
 * `planId`, or one account), where their host's file system has user quotas
 * (lib/provisioning/quota.ts): at start (the panel's own machine), after a plan's disk_mb or an
 * account's plan changed. An account on another node gets it as queued work (lib/nodes/reconcile.ts):
 * a plan change does not wait for every node.
 */
export async function applyDiskQuotas(db: Queryable, where: { planId?: number; accountId?: number } = {}): Promise<void> {
  const localQuotas = Boolean(await quotaMountPoint());
  const accounts = await db
    .select({ id: hostingAccounts.id, username: hostingAccounts.username, diskMb: plans.diskMb, node: nodes })
    .from(hostingAccounts)
    .innerJoin(plans, eq(plans.id, hostingAccounts.planId))
    .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
    .where(and(where.planId === undefined ? undefined : eq(plans.id, where.planId), where.accountId === undefined ? undefined : eq(hostingAccounts.id, where.accountId)));
  for (const account of accounts) {
    const input = { username: account.username, diskMb: account.diskMb };
    if (account.node.name === LOCAL_NODE) {
      if (localQuotas) await hostOfNode(account.node).run("account.quota", input);
    } else {
      await queueOnNode(db, account.node, account.id, "quota", "account.quota", input);
    }
  }
}
