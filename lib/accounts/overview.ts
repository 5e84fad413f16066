import { and, desc, eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { auditLog } from "@/db/schema";
import { backupStatus } from "@/lib/backups/service";
import { listCronJobs } from "@/lib/cron/service";
import { type DatabaseRecord, type DatabaseUserRecord, listDatabases, listDatabaseUsers } from "@/lib/databases/service";
import { listDomains } from "@/lib/domains/service";
import { AppError } from "@/lib/errors";
import { findNodeByName, nodeStateOf } from "@/lib/nodes/service";
import { listSshKeys } from "@/lib/ssh/service";
import { lastDiskUsage } from "@/lib/hosting/disk-usage";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { ADMIN } from "./manager";
import type { AccountListRow } from "./schemas";
import { getAccount, getUsageDetails, visitorStats } from "./service";

// What the admin's account page shows at its top (the account summary): everything the account
// has and uses, read through the same services as the API, in one call.

// The API answers an account without databases (or database users) 404, as SPEC.md says; the
// admin's pages list them, and none is an empty list.
const noneIsEmpty = <Row>(error: unknown): Row[] => {
  if (error instanceof AppError && error.code === "NOT_FOUND") return [];
  throw error;
};

/** The account's databases, with their sizes and users; [] when it has none. */
export const accountDatabases = (db: Queryable, accountId: number) => listDatabases(db, accountId).catch(noneIsEmpty<DatabaseRecord>);

/** The account's database users, with their databases and privileges; [] when it has none. */
export const accountDatabaseUsers = (db: Queryable, accountId: number) => listDatabaseUsers(db, accountId).catch(noneIsEmpty<DatabaseUserRecord>);

export async function accountOverview(db: Queryable, accountId: number) {
  const account = await getAccount(db, accountId);
  const [domains, databases, databaseUsers, usage, backups, sshKeys, cronJobs, node] = await Promise.all([
    listDomains(db, accountId),
    accountDatabases(db, accountId),
    accountDatabaseUsers(db, accountId),
    getUsageDetails(db, accountId),
    backupStatus(db, ADMIN, accountId),
    listSshKeys(db, accountId),
    listCronJobs(db, accountId),
    findNodeByName(db, account.node),
  ]);
  return {
    account,
    domains,
    databases,
    databaseUsers,
    usage,
    backup: backups.accounts[0] ?? null,
    sshKeyCount: sshKeys.ssh_keys.length,
    cronJobCount: cronJobs.length,
    node: node ? { id: node.id, name: node.name, state: nodeStateOf(node) } : null,
  };
}

export type AccountOverview = Awaited<ReturnType<typeof accountOverview>>;

export interface VisitorDay {
  /** YYYY-MM-DD, the day of the web server's log. */
  day: string;
  requests: number;
  visitors: number;
}

/** GoAccess's "visitors" panel (one entry per day, `data` YYYYMMDD) as days, oldest first. */
export function visitorDays(report: Record<string, unknown>): VisitorDay[] {
  const panel = report.visitors as { data?: { data?: unknown; hits?: { count?: unknown }; visitors?: { count?: unknown } }[] } | undefined;
  const days: VisitorDay[] = [];
  for (const entry of panel?.data ?? []) {
    const day = String(entry.data ?? "");
    if (!/^\d{8}$/.test(day)) continue;
    days.push({
      day: `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6)}`,
      requests: Number(entry.hits?.count) || 0,
      visitors: Number(entry.visitors?.count) || 0,
    });
  }
  return days.sort((a, b) => a.day.localeCompare(b.day));
}

/**
 * The account's visitors per day from its combined GoAccess report: no logs yet is no days; a
 * report that cannot be made (GoAccess missing or failing, or the account's node not answering:
 * its page must still open, to move it off that node) is the panel's reason why.
 */
export async function accountVisitorDays(db: Queryable, account: { id: number; username: string }): Promise<{ days: VisitorDay[] } | { unavailable: string }> {
  try {
    return { days: visitorDays(await visitorStats(db, account)) };
  } catch (error) {
    if (error instanceof AppError && error.code === "NOT_FOUND") return { days: [] };
    if (error instanceof AppError && (error.code === "VALIDATION" || error.code === "UNAVAILABLE")) return { unavailable: error.message };
    throw error;
  }
}

/**
 * When a suspended account was suspended: its latest suspension in the audit log (a suspension
 * of a suspended account changes nothing and records nothing); null when active.
 */
export async function suspendedSince(db: Queryable, account: { id: number; is_suspended: boolean }): Promise<string | null> {
  if (!account.is_suspended) return null;
  const [row] = await db
    .select({ at: auditLog.at })
    .from(auditLog)
    .where(and(eq(auditLog.action, "hosting_account.suspend"), eq(auditLog.targetType, "hosting_account"), eq(auditLog.targetId, account.id)))
    .orderBy(desc(auditLog.at))
    .limit(1);
  return row ? row.at.toISOString() : null;
}

/** A row of the admin's accounts list: the account, its home's size as last measured, its last backup. */
export type AccountListEntry = AccountListRow & {
  /** Null when it was never measured here (an account on another node is measured on its page). */
  disk: { used_mb: number; measured_at: string } | null;
  backup: { last_success_at: string | null; last_error: string | null };
};

/**
 * The list's rows with their disk use and last backup. The disk figure is the one kept from the
 * last measurement (the background job measures the panel's homes every 15 minutes): a list never
 * runs `du` for each of its rows.
 */
export async function accountListEntries(db: Queryable, rows: AccountListRow[]): Promise<AccountListEntry[]> {
  const backups = new Map((await backupStatus(db, ADMIN)).accounts.map((status) => [status.account_id, status]));
  return rows.map((row) => {
    const measured = row.node === LOCAL_NODE ? lastDiskUsage(row.username) : null;
    const backup = backups.get(row.id);
    return {
      ...row,
      disk: measured ? { used_mb: measured.mb, measured_at: new Date(measured.at).toISOString() } : null,
      backup: { last_success_at: backup?.last_success_at ?? null, last_error: backup?.last_error ?? null },
    };
  });
}
