import type { Database, Queryable } from "@/db/client";
import { getDb } from "@/db/client";
import { env } from "@/lib/env";
import { syncDomainSite } from "@/lib/hosting/service";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { type AcmeSettings, type CertificateMachine, issueCertificate, tlsFilesFromEnv } from "@/lib/provisioning/acme";
import { certificateMachineOf } from "./machines";
import {
  claimSite,
  recordCovered,
  recordFailed,
  recordInstalled,
  recordIssued,
  releaseSite,
  type SiteToCheck,
  sitesToCheck,
} from "./service";
import { decide, nextAttempt } from "./state";

// The AutoSSL job: one per server process (started from instrumentation.ts when ACME is
// configured). A check walks every site and every mail domain's host name (mail.<domain>, a
// certificate of its own: lib/autossl/service.ts), machine by machine — the panel's own when it has
// a web server, and each node that hosts sites (lib/autossl/machines.ts: the certificates live on
// the machine that serves the site, docs/nodes.md "AutoSSL on nodes"): it issues where AutoSSL is
// on and the certificate is missing, lacks a name (a parked domain added) or is within
// ACME_RENEW_BEFORE_DAYS of expiry (or "Renew now" asked); takes an expired certificate out of
// service where AutoSSL is off; and removes the certificates of domains the machine no longer
// serves. Sites are done one after another (never a burst at the CA), each under its lock
// (lib/autossl/service.ts claimSite). A failure keeps the old certificate, records the reason and
// backs off (lib/autossl/state.ts); a node that does not answer is left for an hour. Checks run at
// start, daily, when a back-off ends, and a moment after requestAutoSslCheck().

export interface AutoSslOptions {
  db?: () => Promise<Database>;
  settings?: AcmeSettings;
  renewBeforeDays?: number;
  now?: () => Date;
  /** Rewrites the site's server blocks after its certificate changed (default: lib/hosting, on the site's machine). */
  siteChanged?: (db: Queryable, domainId: number) => Promise<void>;
  log?: (message: string, error?: unknown) => void;
}

export interface CheckSummary {
  issued: string[];
  failed: string[];
  removed: string[];
}

export interface AutoSslJob {
  /** One pass over every site now (the timer's work); never throws. */
  check(): Promise<CheckSummary>;
  start(): AutoSslJob;
  /** A check a moment from now (changes come in bursts: a domain and its parked names). */
  wake(): void;
  stop(): Promise<void>;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const WAKE_DELAY_MS = 1000;

/**
 * Whether the sites `node` serves get certificates: an ACME directory, and a web server for
 * HTTP-01 there — the panel's own (WEB_SERVER) for `local`, each node's own for the others (NATS).
 */
export const autoSslServes = (node: string) => env().acme !== null && (node === LOCAL_NODE ? env().webServer !== null : env().nats !== null);

/** Whether certificates can be issued for any machine's sites (the job runs). */
export const autoSslConfigured = () => env().acme !== null && (env().webServer !== null || env().nats !== null);

function settingsFromEnv(): AcmeSettings {
  const config = env();
  if (!config.acme) throw new Error("ACME_DIRECTORY_URL is not set");
  return { directoryUrl: config.acme.directoryUrl, email: config.acme.email, caBundlePath: config.acme.caBundlePath, ...tlsFilesFromEnv() };
}

/** The sites of each machine whose sites get certificates (the panel's own only when it has a web server). */
function byMachine(sites: SiteToCheck[]): SiteToCheck[][] {
  const machines = new Map<number, SiteToCheck[]>();
  for (const site of sites) {
    if (!autoSslServes(site.node.name)) continue;
    machines.set(site.node.id, [...(machines.get(site.node.id) ?? []), site]);
  }
  return [...machines.values()];
}

/**
 * The reason shown on the Domain record: the CA's or the self-check's words, but never a local
 * file's path (a failed write under CERTS_DIR is for the panel's log).
 */
function publicReason(error: unknown): string {
  if (error instanceof Error && "path" in error) return "the certificate could not be stored (see the panel's log)";
  return (error instanceof Error ? error.message : String(error)).slice(0, 1000);
}

export function createAutoSslJob(options: AutoSslOptions = {}): AutoSslJob {
  const openDb = options.db ?? getDb;
  const clock = options.now ?? (() => new Date());
  const log = options.log ?? ((message, error) => console.error(`[autossl] ${message}`, error ?? ""));
  const siteChanged = options.siteChanged ?? syncDomainSite;
  let settings: AcmeSettings | null = options.settings ?? null;
  let timer: NodeJS.Timeout | null = null;
  let started = false;
  let inFlight: Promise<CheckSummary> | null = null;
  let checkAgain = false;

  function schedule(delayMs: number) {
    if (!started) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void job.check(), Math.max(0, delayMs));
    timer.unref();
  }

  async function issue(db: Database, machine: CertificateMachine, site: SiteToCheck, summary: CheckSummary) {
    const row = await claimSite(db, site);
    if (!row) return; // another instance is issuing it
    try {
      // Read again under the lock: another instance may have just finished this very site.
      const installed = (await machine.certificates([site.domain])).get(site.domain) ?? null;
      const decision = decide({ ...site, row, installed }, clock(), renewBeforeDays());
      if (decision.action !== "issue") {
        await releaseSite(db, site);
        return;
      }
      log(`${site.domain}: issuing for ${site.names.join(", ")} on ${site.node.name} (${decision.reason})`);
      const certificate = await issueCertificate(settings!, machine, { domain: site.domain, names: site.names });
      await recordIssued(db, site, certificate);
      summary.issued.push(site.domain);
    } catch (error) {
      const failures = row.failures + 1;
      const message = publicReason(error);
      log(`${site.domain}: no certificate (attempt ${failures}):`, error);
      await recordFailed(db, site, { error: message, failures, nextAttemptAt: nextAttempt(failures, clock()) });
      summary.failed.push(site.domain);
      return;
    }
    await rewriteSite(db, machine, site);
  }

  /**
   * After its certificate changed (and was recorded): the site's server blocks (a mail host name
   * has none that name the certificate), then the machine's servers reloaded.
   */
  async function rewriteSite(db: Queryable, machine: CertificateMachine, site: SiteToCheck) {
    try {
      if (site.kind === "site") await siteChanged(db, site.domainId);
      await machine.reload();
    } catch (error) {
      log(`${site.domain}: the certificate is installed, but its site could not be rewritten:`, error);
    }
  }

  const renewBeforeDays = () => options.renewBeforeDays ?? env().acme?.renewBeforeDays ?? 30;

  /**
   * The sites and mail host names of one machine, and the certificates it keeps for names it no
   * longer serves (deleted, account terminated or moved). Returns when the next check is due for them.
   */
  async function checkMachine(db: Database, sites: SiteToCheck[], summary: CheckSummary): Promise<number> {
    let wakeAt = Infinity;
    const machine = certificateMachineOf(sites[0].node, settings!);
    const certificates = await machine.certificates();
    for (const site of sites) {
      if (!site.autoSsl && !site.row?.names.length) continue; // never had a certificate
      const installed = certificates.get(site.domain) ?? null;
      if (site.row && (site.row.expiresAt?.getTime() ?? null) !== (installed?.expiresAt.getTime() ?? null)) {
        await recordInstalled(db, site, installed);
      }
      const decision = decide({ ...site, installed }, clock(), renewBeforeDays());
      if (decision.action === "issue") await issue(db, machine, site, summary);
      else if (decision.action === "wait") wakeAt = Math.min(wakeAt, decision.until.getTime());
      else if (decision.action === "none" && site.autoSsl && installed && site.row && site.row.status !== "active") {
        await recordCovered(db, site);
      }
      else if (decision.action === "remove") {
        await machine.remove([site.domain]);
        await recordInstalled(db, site, null);
        await rewriteSite(db, machine, site);
        summary.removed.push(site.domain);
      }
    }
    const served = new Set(sites.map((site) => site.domain));
    const orphans = [...certificates.keys()].filter((domain) => !served.has(domain));
    if (orphans.length) {
      await machine.remove(orphans);
      summary.removed.push(...orphans);
    }
    return wakeAt;
  }

  async function runCheck(): Promise<CheckSummary> {
    const summary: CheckSummary = { issued: [], failed: [], removed: [] };
    let wakeAt = clock().getTime() + DAY_MS;
    try {
      settings ??= settingsFromEnv();
      const db = await openDb();
      for (const sites of byMachine(await sitesToCheck(db))) {
        try {
          wakeAt = Math.min(wakeAt, await checkMachine(db, sites, summary));
        } catch (error) {
          // One machine that does not answer (a node away) holds up no other.
          log(`the check of ${sites[0].node.name} failed; next attempt in an hour:`, error);
          wakeAt = Math.min(wakeAt, clock().getTime() + HOUR_MS);
        }
      }
    } catch (error) {
      log("the check failed; next attempt in an hour:", error);
      wakeAt = Math.min(wakeAt, clock().getTime() + HOUR_MS);
    }
    schedule(wakeAt - clock().getTime());
    return summary;
  }

  const job: AutoSslJob = {
    check() {
      if (inFlight) {
        checkAgain = true;
        return inFlight;
      }
      inFlight = runCheck().finally(() => {
        inFlight = null;
        if (checkAgain) {
          checkAgain = false;
          schedule(0);
        }
      });
      return inFlight;
    },
    start() {
      if (started) return job;
      started = true;
      void job.check();
      return job;
    },
    wake() {
      if (inFlight) checkAgain = true;
      else schedule(WAKE_DELAY_MS);
    },
    async stop() {
      started = false;
      if (timer) clearTimeout(timer);
      timer = null;
      await inFlight;
    },
  };
  return job;
}

// instrumentation.ts and the route handlers are separate module instances: the job lives on
// globalThis so a change made through the API can wake the one job of the process.
const globalForJob = globalThis as unknown as { __panelAutoSslJob?: AutoSslJob };

export function startAutoSslJob(options?: AutoSslOptions): AutoSslJob {
  return (globalForJob.__panelAutoSslJob ??= createAutoSslJob(options).start());
}

export async function stopAutoSslJob(): Promise<void> {
  const job = globalForJob.__panelAutoSslJob;
  globalForJob.__panelAutoSslJob = undefined;
  await job?.stop();
}

/** After a change that may need a certificate (AutoSSL on, a domain or parked name added). */
export function requestAutoSslCheck(): void {
  globalForJob.__panelAutoSslJob?.wake();
}
