import type { domainCertificates } from "@/db/schema";
import type { SslState } from "@/lib/domains/schemas";

// AutoSSL's decisions, pure: what a site needs, what the Domain record says, how long to back off.

type CertificateRow = typeof domainCertificates.$inferSelect;

const DAY_MS = 86_400_000;
/** First retry after a failure, doubled per further failure up to the cap: at most three
 * attempts in the first hour (Let's Encrypt allows five failed validations per name and hour). */
export const BACKOFF_BASE_MS = 15 * 60_000;
export const BACKOFF_CAP_MS = DAY_MS;

export interface Installed {
  names: string[];
  expiresAt: Date;
}

export type Decision =
  /** Order a certificate now. */
  | { action: "issue"; reason: string }
  /** Due, but backing off after failures until `until`. */
  | { action: "wait"; until: Date }
  /** AutoSSL is off and the certificate has expired: take it out of service. */
  | { action: "remove" }
  | { action: "none" };

export function decide(
  site: { autoSsl: boolean; names: string[]; row: CertificateRow | null; installed: Installed | null },
  now: Date,
  renewBeforeDays: number,
): Decision {
  const { installed, row } = site;
  if (!site.autoSsl) {
    return installed && installed.expiresAt <= now ? { action: "remove" } : { action: "none" };
  }
  let reason: string | null = null;
  if (!installed) reason = "no certificate";
  else if (!sameNames(installed.names, site.names)) reason = "names changed";
  else if (installed.expiresAt.getTime() - now.getTime() < renewBeforeDays * DAY_MS) reason = "renewal due";
  else if (row?.renewRequested) reason = "renewal requested";
  if (!reason) return { action: "none" };
  if (row?.nextAttemptAt && row.nextAttemptAt > now) return { action: "wait", until: row.nextAttemptAt };
  return { action: "issue", reason };
}

const sameNames = (a: string[], b: string[]) => a.length === b.length && [...a].sort().join(" ") === [...b].sort().join(" ");

/** When to try again after the `failures`-th consecutive failure. */
export function nextAttempt(failures: number, now: Date): Date {
  const delay = Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, failures - 1), BACKOFF_CAP_MS);
  return new Date(now.getTime() + delay);
}

/** What the Domain record's `ssl` is made of: these columns of its site's certificate row. */
export type CertificateStatusRow = Pick<CertificateRow, "status" | "names" | "expiresAt" | "error">;

/** The Domain record's `ssl` for `name`, from its site's certificate row (lib/domains/schemas.ts). */
export function sslState(name: string, row: CertificateStatusRow | null, autoSsl: boolean, now = new Date()): SslState {
  const covered = row !== null && row.expiresAt !== null && row.expiresAt > now && row.names.includes(name);
  const expiresAt = covered ? row.expiresAt!.toISOString() : null;
  if (autoSsl && row?.status === "failed") return { status: "failed", expires_at: expiresAt, error: row.error };
  if (covered) return { status: "active", expires_at: expiresAt, error: null };
  return { status: autoSsl ? "pending" : "off", expires_at: null, error: null };
}
