import fs from "node:fs/promises";
import type { Database, Queryable } from "@/db/client";
import { getDb } from "@/db/client";
import { env } from "@/lib/env";
import { syncDomainSite } from "@/lib/hosting/service";
import { runCommand } from "@/lib/provisioning/system";
import { type AcmeSettings, issueCertificate, readCertificate, removeCertificate } from "@/lib/provisioning/acme";
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
// configured). A check walks every site: it issues where AutoSSL is on and the certificate is
// missing, lacks a name (a parked domain added) or is within ACME_RENEW_BEFORE_DAYS of expiry
// (or "Renew now" asked); takes an expired certificate out of service where AutoSSL is off; and
// removes the certificates of domains that no longer exist. Sites are done one after another
// (never a burst at the CA), each under its lock (lib/autossl/service.ts claimSite). A failure
// keeps the old certificate, records the reason and backs off (lib/autossl/state.ts).
// Checks run at start, daily, when a back-off ends, and a moment after requestAutoSslCheck().

export interface AutoSslOptions {
  db?: () => Promise<Database>;
  settings?: AcmeSettings;
  renewBeforeDays?: number;
  now?: () => Date;
  /** Rewrites the site's server blocks after its certificate changed (default: lib/hosting). */
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
const WAKE_DELAY_MS = 1000;

/** Whether certificates can be issued here: an ACME directory and a web server (for HTTP-01). */
export const autoSslConfigured = () => env().acme !== null && env().webServer !== null;

function settingsFromEnv(): AcmeSettings {
  const config = env();
  if (!config.acme) throw new Error("ACME_DIRECTORY_URL is not set");
  return {
    directoryUrl: config.acme.directoryUrl,
    email: config.acme.email,
    caBundlePath: config.acme.caBundlePath,
    certsDir: config.certsDir,
    challengeDir: config.acmeChallengeDir,
    selfCheckPort: config.webHttpPort,
  };
}

/**
 * The site's server blocks from the database (with or without its certificate), then a reload:
 * a renewed certificate at the same path changes no configuration file, and nginx reads
 * certificates only when it loads.
 */
async function rewriteAndReload(db: Queryable, domainId: number) {
  await syncDomainSite(db, domainId);
  const failure = await runCommand(env().nginxReloadCommand);
  if (failure) throw new Error(`the web server did not reload: ${failure}`);
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
  const siteChanged = options.siteChanged ?? rewriteAndReload;
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

  async function issue(db: Database, site: SiteToCheck, summary: CheckSummary) {
    const row = await claimSite(db, site.domainId);
    if (!row) return; // another instance is issuing it
    try {
      // Read again under the lock: another instance may have just finished this very site.
      const installed = await readCertificate(settings!.certsDir, site.domain);
      const decision = decide({ ...site, row, installed }, clock(), renewBeforeDays());
      if (decision.action !== "issue") {
        await releaseSite(db, site.domainId);
        return;
      }
      log(`${site.domain}: issuing for ${site.names.join(", ")} (${decision.reason})`);
      const certificate = await issueCertificate(settings!, { domain: site.domain, names: site.names });
      await recordIssued(db, site.domainId, certificate);
      summary.issued.push(site.domain);
    } catch (error) {
      const failures = row.failures + 1;
      const message = publicReason(error);
      log(`${site.domain}: no certificate (attempt ${failures}):`, error);
      await recordFailed(db, site.domainId, { error: message, failures, nextAttemptAt: nextAttempt(failures, clock()) });
      summary.failed.push(site.domain);
      return;
    }
    await rewriteSite(db, site);
  }

  async function rewriteSite(db: Queryable, site: SiteToCheck) {
    try {
      await siteChanged(db, site.domainId);
    } catch (error) {
      log(`${site.domain}: the certificate is installed, but its site could not be rewritten:`, error);
    }
  }

  const renewBeforeDays = () => options.renewBeforeDays ?? env().acme?.renewBeforeDays ?? 30;

  /** Certificates whose domain is gone (deleted, account terminated). */
  async function removeOrphans(sites: SiteToCheck[], summary: CheckSummary) {
    const hosted = new Set(sites.map((site) => site.domain));
    const entries = await fs.readdir(settings!.certsDir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith(".") || hosted.has(entry.name)) continue;
      await removeCertificate(settings!.certsDir, entry.name);
      summary.removed.push(entry.name);
    }
  }

  async function runCheck(): Promise<CheckSummary> {
    const summary: CheckSummary = { issued: [], failed: [], removed: [] };
    let wakeAt = clock().getTime() + DAY_MS;
    try {
      settings ??= settingsFromEnv();
      const db = await openDb();
      const sites = await sitesToCheck(db);
      for (const site of sites) {
        if (!site.autoSsl && !site.row?.names.length) continue; // never had a certificate
        const installed = await readCertificate(settings.certsDir, site.domain);
        if (site.row && (site.row.expiresAt?.getTime() ?? null) !== (installed?.expiresAt.getTime() ?? null)) {
          await recordInstalled(db, site.domainId, installed);
        }
        const decision = decide({ ...site, installed }, clock(), renewBeforeDays());
        if (decision.action === "issue") await issue(db, site, summary);
        else if (decision.action === "wait") wakeAt = Math.min(wakeAt, decision.until.getTime());
        else if (decision.action === "none" && site.autoSsl && installed && site.row && site.row.status !== "active") {
          await recordCovered(db, site.domainId);
        }
        else if (decision.action === "remove") {
          await removeCertificate(settings.certsDir, site.domain);
          await recordInstalled(db, site.domainId, null);
          await rewriteSite(db, site);
          summary.removed.push(site.domain);
        }
      }
      await removeOrphans(sites, summary);
    } catch (error) {
      log("the check failed; next attempt in an hour:", error);
      wakeAt = Math.min(wakeAt, clock().getTime() + 3_600_000);
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
