import fs from "node:fs/promises";
import path from "node:path";
import { and, eq, inArray } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { domains, hostingAccounts, phpVersions, plans } from "@/db/schema";
import { siteNames } from "@/lib/domains/names";
import { env } from "@/lib/env";
import {
  createDocumentRoot,
  createSystemUser,
  LOGIN_SHELL,
  NO_LOGIN_SHELL,
  removeHome,
  removeSystemUser,
  setLoginShell,
} from "@/lib/provisioning/homes";
import { removeAccountLogs } from "@/lib/provisioning/goaccess";
import { LinkInHomeError, pathComponents } from "@/lib/provisioning/home-files";
import { applySites, ensureLinkProtection, renderSite, type Site, type SiteChange, siteSettings, writtenSiteDomains } from "@/lib/provisioning/nginx";
import { writeLogrotateRules } from "@/lib/provisioning/logrotate";
import { quotaMountPoint, setDiskQuota } from "@/lib/provisioning/quota";
import { eachLimited } from "@/lib/provisioning/system";
import { assertPhpInstalled, type Pool, poolSocketPath, reloadPhp, removePool, waitForPools, writePool } from "@/lib/provisioning/php-fpm";
import { phpSettingsOf } from "@/lib/php-settings/rows";
import { applyLoginAccess } from "@/lib/ssh/service";
import { accessLogName, accountLogDir, fileOwner, homeOf, homesEnabled, NGINX_ERROR_LOG, prepareHome, proxySocketPath, webHostingEnabled } from "@/lib/provisioning/home-layout";

// Web hosting (DESIGN.md "Web hosting"): what the database says each account's sites, PHP
// pools, home and Linux user must be, handed to the provisioning modules. Every function that
// writes reads its rows through the caller's transaction and holds the account's row lock
// (the caller's), so two changes of one account never write from different snapshots.

const poolUser = (username: string) => (env().systemUsers ? username : env().webServerGroup);

/** A certificate the ACME job wrote for the domain (CERTS_DIR/<domain>/fullchain.pem + privkey.pem), if any. */
async function certificateOf(domain: string) {
  const dir = path.join(env().certsDir, domain);
  const certificatePath = path.join(dir, "fullchain.pem");
  const keyPath = path.join(dir, "privkey.pem");
  const present = await Promise.all([certificatePath, keyPath].map((file) => fs.access(file).then(() => true, () => false)));
  return present.every(Boolean) ? { certificatePath, keyPath } : null;
}

interface Hosting {
  sites: Site[];
  pools: Pool[];
}

/** The sites and pools of the given accounts (all when `accountIds` is undefined), from the database. */
async function loadHosting(db: Queryable, accountIds?: number[]): Promise<Hosting> {
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
      username: hostingAccounts.username,
      status: hostingAccounts.status,
    })
    .from(domains)
    .innerJoin(hostingAccounts, eq(hostingAccounts.id, domains.accountId))
    .leftJoin(phpVersions, eq(phpVersions.id, domains.phpVersionId))
    .where(accountIds ? inArray(domains.accountId, accountIds) : undefined)
    .orderBy(domains.id);
  const parked = new Map<number, string[]>();
  for (const row of rows) if (row.parkedOn !== null) parked.set(row.parkedOn, [...(parked.get(row.parkedOn) ?? []), row.domain]);
  const served = rows.filter((row) => row.type !== "parked");
  // CERTS_DIR listed once: the two files are looked for only in the directories it holds (the
  // domains with a certificate), not for each of thousands of domains at start.
  const certificateDirs = new Set(await fs.readdir(env().certsDir).catch(() => [] as string[]));
  const certificates = new Map<string, Awaited<ReturnType<typeof certificateOf>>>();
  await eachLimited(served, 64, async (row) => {
    certificates.set(row.domain, certificateDirs.has(row.domain) ? await certificateOf(row.domain) : null);
  });
  const settings = await phpSettingsOf(db, [...new Set(served.map((row) => row.accountId))]);
  const sites: Site[] = [];
  const pools = new Map<string, Pool>();
  for (const row of served) {
    const home = homeOf(row.username);
    const logs = accountLogDir(row.username);
    const php = settings.get(row.accountId)!;
    // Only the php profile runs PHP; a static or proxied domain never reaches a pool.
    const version = row.fpm && row.profile === "php" ? row.php : null;
    if (version) {
      pools.set(`${row.username}/${version}`, {
        username: row.username,
        version,
        user: poolUser(row.username),
        listenGroup: env().webServerGroup,
        home,
        settings: php,
      });
    }
    sites.push({
      domain: row.domain,
      username: row.username,
      serverNames: siteNames(row.domain, row.type, parked.get(row.id) ?? []),
      documentRoot: path.join(home, row.path ?? "public_html"),
      accessLog: path.join(logs, accessLogName(row.domain)),
      errorLog: path.join(logs, NGINX_ERROR_LOG),
      profile: row.profile,
      phpSocket: version ? poolSocketPath(row.username, version) : null,
      proxySocket: row.profile === "proxy" && row.proxySocket !== null ? proxySocketPath(row.username, row.proxySocket) : null,
      maxBodyMb: php.post_max_size_mb,
      suspended: row.status === "suspended",
      tls: certificates.get(row.domain) ?? null,
    });
  }
  return { sites, pools: [...pools.values()] };
}

const render = (sites: Site[]): SiteChange[] => {
  const settings = siteSettings();
  return sites.map((site) => ({ domain: site.domain, contents: renderSite(site, settings) }));
};

const accessLogs = (sites: Site[]) => sites.map((site) => site.accessLog);

/** The accounts whose sites include a proxied one: their homes need run/ (made with every home; an older home gets it here). */
const proxyAccounts = (sites: Site[]) => [...new Set(sites.filter((site) => site.profile === "proxy").map((site) => site.username))];

/** Writes the pools wanted (before the sites that use their sockets), reloading what changed. */
async function writePools(wanted: Pool[]): Promise<void> {
  const written = [];
  for (const pool of wanted) if (await writePool(pool)) written.push(pool);
  await reloadPhp(new Set(written.map((pool) => pool.version)));
  await waitForPools(written);
}

/**
 * Removes the account's pools of versions no domain uses any more: only after the sites were
 * accepted, so a refused site change leaves the old sites with the pools they point at.
 */
async function removeUnusedPools(db: Queryable, username: string, wanted: Pool[]): Promise<void> {
  const changed = new Set<string>();
  const known = await db.select({ version: phpVersions.version }).from(phpVersions);
  for (const { version } of known) {
    if (!wanted.some((pool) => pool.version === version) && (await removePool(username, version))) changed.add(version);
  }
  await reloadPhp(changed);
}

/**
 * (Re)writes every site and PHP pool of one account from the database: after a domain is
 * added or removed, PHP changes, the account is suspended or unsuspended. Throws 422 (and
 * changes no site) when nginx refuses the result. Call it inside the transaction of the change.
 */
export async function syncAccountSites(
  db: Queryable,
  accountId: number,
  options: { removedDomains?: string[]; suspended?: boolean } = {},
): Promise<void> {
  if (!webHostingEnabled()) return;
  const [account] = await db.select({ username: hostingAccounts.username }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId));
  if (!account) return;
  const hosting = await loadHosting(db, [accountId]);
  // The suspension being applied or undone (lib/accounts/lifecycle.ts), else the stored status.
  if (options.suspended !== undefined) for (const site of hosting.sites) site.suspended = options.suspended;
  const removedDomains = options.removedDomains ?? [];
  for (const username of proxyAccounts(hosting.sites)) await prepareHome(username);
  await writePools(hosting.pools);
  const removals = removedDomains.map((domain) => ({ domain, contents: null }));
  await applySites([...render(hosting.sites), ...removals], accessLogs(hosting.sites));
  await removeUnusedPools(db, account.username, hosting.pools);
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

/** Termination, first step: the account's sites and PHP pools go (its files stay until removeAccountHome). */
export async function removeAccountSites(db: Queryable, accountId: number): Promise<void> {
  if (!webHostingEnabled()) return;
  const [account] = await db.select({ username: hostingAccounts.username }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId));
  if (!account) return;
  const hosting = await loadHosting(db, [accountId]);
  await applySites(hosting.sites.map((site) => ({ domain: site.domain, contents: null })));
  await removeUnusedPools(db, account.username, []);
}

/**
 * Termination, last steps: the Linux user, the home with every file of the account, and its
 * access logs and visitor statistics (a new account of the same name must see none of them).
 */
export async function removeAccountHome(username: string): Promise<void> {
  if (env().systemUsers) await removeSystemUser(username);
  if (homesEnabled()) await removeHome(homeOf(username));
  await removeAccountLogs(username);
}

/**
 * A new account's Linux user, home and main site, inside its creating transaction (its rows
 * are written, not committed). Cleans up after itself when a step fails; returns the undo
 * for a commit that fails afterwards.
 */
export async function provisionAccount(db: Queryable, accountId: number): Promise<() => Promise<void>> {
  const [account] = await db
    .select({ username: hostingAccounts.username, ssh: hostingAccounts.hasSshAccess, diskMb: plans.diskMb })
    .from(hostingAccounts)
    .innerJoin(plans, eq(plans.id, hostingAccounts.planId))
    .where(eq(hostingAccounts.id, accountId));
  const { username } = account;
  let userCreated = false;
  let siteDomains: string[] = [];
  // The undo removes only what this run made: a HOME_ROOT/<username> that was there before (an
  // administrator's copy of a site to adopt, or anything else) stays, whatever fails.
  const homeWasThere = homesEnabled() && (await fs.lstat(homeOf(username)).then(() => true, () => false));
  const undo = async () => {
    if (siteDomains.length) await applySites(siteDomains.map((domain) => ({ domain, contents: null })));
    if (userCreated) await removeSystemUser(username);
    if (homesEnabled() && !homeWasThere) await removeHome(homeOf(username));
  };
  if (!homesEnabled()) return undo;
  try {
    if (env().systemUsers) {
      await createSystemUser(username, homeOf(username), account.ssh ? LOGIN_SHELL : NO_LOGIN_SHELL);
      userCreated = true;
      await applyLoginAccess(username, account.ssh);
      await setDiskQuota(username, account.diskMb);
    }
    await prepareHome(username);
    if (webHostingEnabled()) {
      const hosting = await loadHosting(db, [accountId]);
      for (const site of hosting.sites) await createDocumentRoot(homeOf(username), site.documentRoot, fileOwner(username), env().webServerGroup);
      siteDomains = hosting.sites.map((site) => site.domain);
      await applySites(render(hosting.sites), accessLogs(hosting.sites));
    }
  } catch (error) {
    siteDomains = [];
    await undo().catch((cleanup) => console.error(`[web] could not undo the provisioning of ${username}:`, cleanup));
    throw error;
  }
  return undo;
}

/** Whether the relative path `part` is `whole` or one of the directories on the way to it. */
const isOnPath = (part: string, whole: string) => {
  const [parts, wholeParts] = [pathComponents(part), pathComponents(whole)];
  return parts.every((name, index) => wholeParts[index] === name);
};

/** A new domain's document root and the account's sites, inside the domain's creating transaction. */
export async function provisionDomain(db: Queryable, domainId: number): Promise<void> {
  if (!webHostingEnabled()) return;
  const [row] = await db
    .select({ accountId: domains.accountId, username: hostingAccounts.username, path: domains.domainPath })
    .from(domains)
    .innerJoin(hostingAccounts, eq(hostingAccounts.id, domains.accountId))
    .where(eq(domains.id, domainId));
  if (row.path !== null) {
    const home = homeOf(row.username);
    try {
      await prepareHome(row.username);
      await createDocumentRoot(home, path.join(home, row.path), fileOwner(row.username), env().webServerGroup);
    } catch (error) {
      // A link the customer put on the way: 422 naming domain_path when it is on that path.
      if (error instanceof LinkInHomeError && isOnPath(error.relativePath, row.path)) throw error.forField("domain_path");
      throw error;
    }
  }
  await syncAccountSites(db, row.accountId);
}

/** 422 naming the version when the domain would use a PHP this server lacks (only when sites are served). */
export async function assertPhpUsable(version: string): Promise<void> {
  if (webHostingEnabled()) await assertPhpInstalled(version);
}

/** The admin's SSH toggle: the Linux user's login shell follows it, and with SSH_SERVER whether it is chrooted to SFTP. */
export async function applySshAccess(username: string, hasSshAccess: boolean): Promise<void> {
  if (!env().systemUsers) return;
  await setLoginShell(username, hasSshAccess ? LOGIN_SHELL : NO_LOGIN_SHELL);
  await applyLoginAccess(username, hasSshAccess);
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

async function writeAllSites(db: Queryable, onTestStart: () => void): Promise<void> {
  const hosting = await loadHosting(db);
  // A stored value a renderer refuses (render-checks.ts) is logged, and that site or pool keeps
  // the file it has: one bad row must not keep the panel, or every other site, from starting.
  const changes: SiteChange[] = [];
  const settings = siteSettings();
  for (const site of hosting.sites) {
    try {
      changes.push({ domain: site.domain, contents: renderSite(site, settings) });
    } catch (error) {
      console.error("[web] a site was not written at start:", (error as Error).message);
    }
  }
  for (const username of proxyAccounts(hosting.sites)) {
    await prepareHome(username).catch((error) => console.error(`[web] the home of ${username} could not be prepared at start:`, (error as Error).message));
  }
  const hosted = new Set(hosting.sites.map((site) => site.domain));
  for (const domain of await writtenSiteDomains()) if (!hosted.has(domain)) changes.push({ domain, contents: null });
  const versions = new Set<string>();
  for (const pool of hosting.pools) {
    try {
      if (await writePool(pool)) versions.add(pool.version);
    } catch (error) {
      console.error("[web] a PHP pool was not written at start:", (error as Error).message);
    }
  }
  await reloadPhp(versions);
  try {
    await applySites(changes, accessLogs(hosting.sites), onTestStart);
  } catch (error) {
    console.error("[web] the sites could not be written at start:", (error as Error).message);
  }
}

/**
 * The plan's disk_mb as the kernel quota of the accounts' Linux users (all, or those on
 * `planId`), where HOME_ROOT's file system has user quotas (lib/provisioning/quota.ts): at start,
 * after a plan's disk_mb or an account's plan changed. Without quotas: nothing to do.
 */
export async function applyDiskQuotas(db: Queryable, where: { planId?: number; accountId?: number } = {}): Promise<void> {
  if (!(await quotaMountPoint())) return;
  const accounts = await db
    .select({ username: hostingAccounts.username, diskMb: plans.diskMb })
    .from(hostingAccounts)
    .innerJoin(plans, eq(plans.id, hostingAccounts.planId))
    .where(and(where.planId === undefined ? undefined : eq(plans.id, where.planId), where.accountId === undefined ? undefined : eq(hostingAccounts.id, where.accountId)));
  for (const account of accounts) await setDiskQuota(account.username, account.diskMb);
}
