import fs from "node:fs/promises";
import path from "node:path";
import { env } from "@/lib/env";
import { LinkInHomeError, pathComponents } from "./home-files";
import { accessLogName, accountLogDir, fileOwner, homeOf, homesEnabled, NGINX_ERROR_LOG, prepareHome, proxySocketPath, webHostingEnabled } from "./home-layout";
import { createDocumentRoot, removeHome, removeSystemUser } from "./homes";
import { assertPanelUser, FOREIGN_USER, linuxNameOwner } from "./marks";
import { createAccountUser } from "./logins";
import type { PhpSettings } from "./rules";
import { applySites, foreignSiteError, foreignSiteFiles, liveForwardDomains, renderSite, type Site, type SiteChange, siteSettings, writtenSiteDomains } from "./nginx";
import { type Pool, poolSocketPath, reloadPhp, removePool, waitForPools, writePool } from "./php-fpm";
import { eachLimited } from "./system";

// An account's sites and PHP pools on the machine that serves them (docs/web-hosting.md
// "What the panel writes where"; docs/nodes.md "How it works"): what the panel's database says, as
// plain values (HostedAccount), made into server blocks and pools with this machine's own settings
// (HOME_ROOT, sockets, certificates). The panel's own machine runs these in its process; another
// node's agent runs them for its jobs.

/** One served domain of an account (a parked one is a name of the domain it is parked on). */
export interface HostedDomain {
  domain: string;
  /** Every name it answers: the domain, `www.` for a main domain, the names parked on it. */
  serverNames: string[];
  /** The document root, relative to the home. */
  path: string;
  profile: "php" | "static" | "proxy";
  /** The PHP version of its pool; null: no PHP (static, proxy, or PHP-FPM off). */
  phpVersion: string | null;
  /** The proxy profile's socket, a name in HOME/run/. */
  proxySocket: string | null;
}

/** What the sites and pools of one account are made from. */
export interface HostedAccount {
  username: string;
  suspended: boolean;
  /**
   * With `suspended`, during a move's final pass: its sites still answer GET and HEAD from this
   * machine, every other method 503 (logins, cron and mail stay suspended).
   */
  readOnly?: boolean;
  /**
   * With `suspended`, during a move's final pass and switch on its source: mail for its domains
   * is deferred (450) rather than delivered into a copy about to be left behind (./mail.ts).
   */
  moving?: boolean;
  php: PhpSettings;
  domains: HostedDomain[];
}

interface Hosting {
  sites: Site[];
  pools: Pool[];
}

const poolUser = (username: string) => (env().systemUsers ? username : env().webServerGroup);

/** A certificate the ACME job wrote for the domain (CERTS_DIR/<domain>/fullchain.pem + privkey.pem), if any. */
export async function certificateOf(domain: string) {
  const dir = path.join(env().certsDir, domain);
  const certificatePath = path.join(dir, "fullchain.pem");
  const keyPath = path.join(dir, "privkey.pem");
  const present = await Promise.all([certificatePath, keyPath].map((file) => fs.access(file).then(() => true, () => false)));
  return present.every(Boolean) ? { certificatePath, keyPath } : null;
}

/** The server blocks and pools of `accounts` on this machine. */
async function hostingOf(accounts: HostedAccount[]): Promise<Hosting> {
  // CERTS_DIR listed once: the two files are looked for only in the directories it holds (the
  // domains with a certificate), not for each of thousands of domains at start.
  const certificateDirs = new Set(await fs.readdir(env().certsDir).catch(() => [] as string[]));
  const served = accounts.flatMap((account) => account.domains.map((domain) => ({ account, domain })));
  const certificates = new Map<string, Awaited<ReturnType<typeof certificateOf>>>();
  await eachLimited(served, 64, async ({ domain }) => {
    certificates.set(domain.domain, certificateDirs.has(domain.domain) ? await certificateOf(domain.domain) : null);
  });
  const sites: Site[] = [];
  const pools = new Map<string, Pool>();
  for (const { account, domain } of served) {
    const home = homeOf(account.username);
    const logs = accountLogDir(account.username);
    const version = domain.profile === "php" ? domain.phpVersion : null;
    if (version) {
      pools.set(`${account.username}/${version}`, {
        username: account.username,
        version,
        user: poolUser(account.username),
        listenGroup: env().webServerGroup,
        home,
        settings: account.php,
      });
    }
    sites.push({
      domain: domain.domain,
      username: account.username,
      serverNames: domain.serverNames,
      documentRoot: path.join(home, domain.path),
      accessLog: path.join(logs, accessLogName(domain.domain)),
      errorLog: path.join(logs, NGINX_ERROR_LOG),
      profile: domain.profile,
      phpSocket: version ? poolSocketPath(account.username, version) : null,
      proxySocket: domain.profile === "proxy" && domain.proxySocket !== null ? proxySocketPath(account.username, domain.proxySocket) : null,
      maxBodyMb: account.php.post_max_size_mb,
      suspended: account.suspended && !account.readOnly,
      readOnly: account.suspended && account.readOnly === true,
      tls: certificates.get(domain.domain) ?? null,
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
 * Removes the account's pools of the `phpVersions` no domain uses any more: only after the sites
 * were accepted, so a refused site change leaves the old sites with the pools they point at.
 */
async function removeUnusedPools(username: string, wanted: Pool[], phpVersions: string[]): Promise<void> {
  const changed = new Set<string>();
  for (const version of phpVersions) {
    if (!wanted.some((pool) => pool.version === version) && (await removePool(username, version))) changed.add(version);
  }
  await reloadPhp(changed);
}

/**
 * (Re)writes every site and PHP pool of one account: after a domain is added or removed, PHP
 * changes, the account is suspended or unsuspended. Throws 422 (and changes no site) when nginx
 * refuses the result. `phpVersions`: every version the panel knows (pools of the others go).
 */
export async function applyAccountSites(input: { account: HostedAccount; removedDomains: string[]; phpVersions: string[] }): Promise<void> {
  if (!webHostingEnabled()) return;
  // A pool runs as the account's user: never as another's user of that name (./marks.ts).
  if (env().systemUsers) await assertPanelUser(input.account.username);
  const hosting = await hostingOf([input.account]);
  for (const username of proxyAccounts(hosting.sites)) await prepareHome(username);
  await writePools(hosting.pools);
  const removals = input.removedDomains.map((domain) => ({ domain, contents: null }));
  await applySites([...render(hosting.sites), ...removals], accessLogs(hosting.sites));
  await removeUnusedPools(input.account.username, hosting.pools, input.phpVersions);
}

/** Termination, first step: the account's sites and PHP pools go (its files stay until its home goes). */
export async function removeAccountSites(input: { username: string; domains: string[]; phpVersions: string[] }): Promise<void> {
  if (!webHostingEnabled()) return;
  await applySites(input.domains.map((domain) => ({ domain, contents: null })));
  await removeUnusedPools(input.username, [], input.phpVersions);
}

/** Whether the relative path `part` is `whole` or one of the directories on the way to it. */
const isOnPath = (part: string, whole: string) => {
  const [parts, wholeParts] = [pathComponents(part), pathComponents(whole)];
  return parts.every((name, index) => wholeParts[index] === name);
};

/**
 * A new domain's document root (`path`, relative to the home), made without following a link;
 * a link the customer put on the way is a 422 naming domain_path.
 */
export async function createDomainRoot(input: { username: string; path: string }): Promise<void> {
  await createDomainRoots({ username: input.username, paths: [input.path] });
}

/**
 * The home made ready once, then the document root of each of `paths` (as createDomainRoot): a
 * link on the way to one of them — in the home's own folders too — is a 422 naming domain_path.
 */
export async function createDomainRoots(input: { username: string; paths: string[] }): Promise<void> {
  if (!webHostingEnabled()) return;
  const home = homeOf(input.username);
  try {
    await prepareHome(input.username);
    for (const root of input.paths) await createDocumentRoot(home, path.join(home, root), fileOwner(input.username), env().webServerGroup);
  } catch (error) {
    if (error instanceof LinkInHomeError && input.paths.some((root) => isOnPath(error.relativePath, root))) throw error.forField("domain_path");
    throw error;
  }
}

/** What a new account's provisioning made, so that an undo removes exactly that (and never a home that was there before). */
export interface Provisioned {
  username: string;
  userCreated: boolean;
  homeWasThere: boolean;
  siteDomains: string[];
}

/**
 * A new account's Linux user, home and main site. Cleans up after itself when a step fails (only
 * what it made: a HOME_ROOT/<username> that was there before, an administrator's copy of a site to
 * adopt or anything else, stays); what it made is the answer, for the undo of a change whose
 * commit fails afterwards (unprovisionAccount).
 */
export async function provisionAccount(input: { account: HostedAccount; shell: boolean; diskMb: number | null }): Promise<Provisioned> {
  const { username } = input.account;
  const made: Provisioned = { username, userCreated: false, homeWasThere: false, siteDomains: [] };
  if (!homesEnabled()) return made;
  made.homeWasThere = await fs.lstat(homeOf(username)).then(() => true, () => false);
  try {
    made.userCreated = await createAccountUser({ username, shell: input.shell, diskMb: input.diskMb });
    await prepareHome(username);
    if (webHostingEnabled()) {
      const hosting = await hostingOf([input.account]);
      // Before any file is written: a file of its name that is another's refuses the account.
      const [foreignSite] = await foreignSiteFiles(hosting.sites.map((site) => site.domain));
      if (foreignSite) throw foreignSiteError(foreignSite);
      for (const site of hosting.sites) await createDocumentRoot(homeOf(username), site.documentRoot, fileOwner(username), env().webServerGroup);
      made.siteDomains = hosting.sites.map((site) => site.domain);
      await writePools(hosting.pools);
      await applySites(render(hosting.sites), accessLogs(hosting.sites));
    }
  } catch (error) {
    made.siteDomains = [];
    await unprovisionAccount(made).catch((cleanup) => console.error(`[web] could not undo the provisioning of ${username}:`, cleanup));
    throw error;
  }
  return made;
}

/** Undoes provisionAccount: exactly what it made. */
export async function unprovisionAccount(made: Provisioned): Promise<void> {
  if (made.siteDomains.length) await applySites(made.siteDomains.map((domain) => ({ domain, contents: null })));
  if (made.userCreated) await removeSystemUser(made.username);
  if (homesEnabled() && !made.homeWasThere) await removeHome(homeOf(made.username));
}

/**
 * Every site and pool of this machine from `accounts` (all it hosts): only files whose content
 * changed are written, files of domains no longer hosted removed, nginx tested and reloaded once.
 * A stored value a renderer refuses is logged and that site or pool keeps the file it has: one
 * bad row must not keep every other site from being served. `onTestStart`: called as `nginx -t`
 * starts (the panel writes its zone files meanwhile: lib/hosting/service.ts syncAllSites).
 */
export async function applyAllSites(all: HostedAccount[], onTestStart: () => void = () => {}): Promise<void> {
  // An account whose Linux user is another's (./marks.ts) gets no site and no pool here.
  const accounts: HostedAccount[] = [];
  for (const account of all) {
    if (env().systemUsers && (await linuxNameOwner(account.username)) === "foreign") console.error(`[web] ${account.username}: ${FOREIGN_USER}; no site or pool written for it`);
    else accounts.push(account);
  }
  const hosting = await hostingOf(accounts);
  const changes: SiteChange[] = [];
  const settings = siteSettings();
  // A source in its move's switch is read-only until the switch makes its sites forwards to the
  // target; from then on a reconcile here (an agent's hello) keeps the forward rather than serve
  // the old copy again beside the target. A switch that fails serves the source again (not
  // read-only): that replaces the forward.
  const forwarded = await liveForwardDomains(hosting.sites.filter((site) => site.readOnly).map((site) => site.domain));
  for (const site of hosting.sites) {
    if (forwarded.has(site.domain)) continue;
    try {
      changes.push({ domain: site.domain, contents: renderSite(site, settings) });
    } catch (error) {
      console.error("[web] a site was not written:", (error as Error).message);
    }
  }
  for (const username of proxyAccounts(hosting.sites)) {
    await prepareHome(username).catch((error) => console.error(`[web] the home of ${username} could not be prepared:`, (error as Error).message));
  }
  const hosted = new Set(hosting.sites.map((site) => site.domain));
  // A moved account's forward stays until it ends (./forwards.ts); one past its end goes.
  const unhosted = (await writtenSiteDomains()).filter((domain) => !hosted.has(domain));
  const forwarding = await liveForwardDomains(unhosted);
  for (const domain of unhosted) if (!forwarding.has(domain)) changes.push({ domain, contents: null });
  const versions = new Set<string>();
  for (const pool of hosting.pools) {
    try {
      if (await writePool(pool)) versions.add(pool.version);
    } catch (error) {
      console.error("[web] a PHP pool was not written:", (error as Error).message);
    }
  }
  await reloadPhp(versions);
  try {
    await applySites(changes, accessLogs(hosting.sites), onTestStart, "skip");
  } catch (error) {
    console.error("[web] the sites could not be written:", (error as Error).message);
  }
}
