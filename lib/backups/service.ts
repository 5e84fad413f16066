import { randomUUID } from "node:crypto";
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import {
  accountBackups,
  backupLease,
  cronJobs,
  customerDatabases,
  databaseGrants,
  databaseUsers,
  dnsRecords,
  domains,
  hostingAccounts,
  phpSettings,
  phpVersions,
  plans,
  sshKeys,
} from "@/db/schema";
import { type AccountManager, managedBy } from "@/lib/accounts/manager";
import { getAccount } from "@/lib/accounts/service";
import { accountMailStates } from "@/lib/email/service";
import { env } from "@/lib/env";
import { AppError, notFound } from "@/lib/errors";
import { type Host, hostOfAccount } from "@/lib/nodes/hosts";
import type { DumpedObject } from "@/lib/provisioning/backup-runs";
import type { ResticSnapshot } from "@/lib/provisioning/restic";

// Backups (docs/backups.md "What a backup holds"): restic, one restore point ("run") per account
// per backup, in the repository of the machine that hosts the account (its node: the work runs
// there, lib/provisioning/backup-runs.ts, through lib/nodes/hosts.ts). restic 0.14 (Debian 12) cannot
// put a file tree and a program's output in one snapshot, so a run is several snapshots sharing
// the tag `run:<id>`: `home` (home.tar: the home as the account's own Linux user reads it,
// never root — lib/provisioning/home-backup.ts), one `db:<name>` per database (mariadb-dump
// --single-transaction piped into `restic backup --stdin`: a consistent dump, never on disk in
// clear) and `records` (the panel's rows of the account as JSON), written last: a run without it
// did not complete and is neither listed nor restored. All carry `account:<username>`. A
// failure records a short reason in account_backups (the tools' own words go to the log of the
// machine that ran them) and removes nothing: older runs stay until retention drops them.
// Restores are lib/backups/restores.ts.

export interface BackupRun {
  /** The run's id: what restores name (`snapshot`). */
  id: string;
  time: string;
  size_bytes: number | null;
  databases: string[];
}

/** What selects an account's snapshots: its id, so a later account reusing the username never sees them. */
export const ownerTag = (accountId: number) => `account-id:${accountId}`;
/** The username, for an admin reading the repository with restic itself. */
export const accountTag = (username: string) => `account:${username}`;
export const runTag = (run: string) => `run:${run}`;
export const tagValue = (snapshot: ResticSnapshot, prefix: string) => snapshot.tags?.find((tag) => tag.startsWith(prefix))?.slice(prefix.length) ?? null;

/**
 * The account's panel records as one JSON document: what a whole-account restore needs besides
 * files and dumps (lib/backups/restore-account.ts reads it). Database users carry their MariaDB
 * password hashes, so their passwords come back without the panel ever knowing them.
 */
async function accountRecords(db: Queryable, accountId: number, machine: { objects: DumpedObject[]; password_hashes: Record<string, string | null> }) {
  const [account] = await db
    .select({ account: hostingAccounts, plan: plans.name })
    .from(hostingAccounts)
    .innerJoin(plans, eq(plans.id, hostingAccounts.planId))
    .where(eq(hostingAccounts.id, accountId));
  const domainRows = (
    await db
      .select({ domain: domains, phpVersion: phpVersions.version })
      .from(domains)
      .leftJoin(phpVersions, eq(phpVersions.id, domains.phpVersionId))
      .where(eq(domains.accountId, accountId))
      .orderBy(asc(domains.id))
  ).map(({ domain, phpVersion }) => ({ ...domain, php_version: phpVersion }));
  const databaseRows = await db.select().from(customerDatabases).where(eq(customerDatabases.accountId, accountId));
  const userRows = await db.select().from(databaseUsers).where(eq(databaseUsers.accountId, accountId));
  const { domains: mailDomainNames, mailboxes, aliases } = (await accountMailStates(db, [accountId])).get(accountId)!;
  return {
    format: RECORDS_FORMAT,
    account: account.account,
    plan: account.plan,
    domains: domainRows,
    dns_records: domainRows.length ? await db.select().from(dnsRecords).where(inArray(dnsRecords.domainId, domainRows.map((row) => row.id))) : [],
    databases: databaseRows,
    database_users: userRows.map((row) => ({ ...row, password_hash: machine.password_hashes[row.username] ?? null })),
    database_grants: databaseRows.length ? await db.select().from(databaseGrants).where(inArray(databaseGrants.databaseId, databaseRows.map((row) => row.id))) : [],
    php_settings: await db.select().from(phpSettings).where(eq(phpSettings.accountId, accountId)),
    cron_jobs: await db.select().from(cronJobs).where(eq(cronJobs.accountId, accountId)),
    ssh_keys: await db.select().from(sshKeys).where(eq(sshKeys.accountId, accountId)),
    // Its email (docs/email.md "Backups, restores and moves"): mail domains, mailboxes with their password
    // hashes (as the machine's passwd-file already holds them), aliases — in the order they were
    // made. Not the DKIM keys: a restore makes new ones (the old private keys went with the account).
    mail: { domains: mailDomainNames, mailboxes, aliases },
    // Each database's routines, views, triggers and events as they were dumped: a restore names
    // those it could not bring back (lib/backups/restores.ts).
    database_objects: machine.objects,
  };
}

/** The version of the records document (records.json) this panel writes. */
export const RECORDS_FORMAT = 1;

/** How long a backup run may take on its machine. */
const BACKUP_DEADLINE_MS = 6 * 60 * 60_000;

/** One write per outcome: a success with the restore points and size when they could be read (else the last ones known). */
async function recordOutcome(db: Queryable, accountId: number, outcome: { error: string } | { runs: number | null; sizeBytes: number | null }): Promise<void> {
  const now = new Date();
  const fields =
    "error" in outcome
      ? { lastFailureAt: now, lastError: outcome.error }
      : {
          lastSuccessAt: now,
          ...(outcome.runs === null ? {} : { snapshots: outcome.runs }),
          ...(outcome.sizeBytes === null ? {} : { sizeBytes: outcome.sizeBytes }),
        };
  await db.insert(accountBackups).values({ accountId, ...fields }).onConflictDoUpdate({ target: accountBackups.accountId, set: fields });
}

/** The message a failure records: an AppError's own (the panel's words); anything else is logged and named only as a failure. */
function failureReason(username: string, error: unknown): string {
  if (error instanceof AppError) return error.message;
  console.error(`[backups] the backup of ${username} failed:`, error);
  return `The backup of ${username} failed (the panel's log says why)`;
}

/**
 * One backup run of the account: home, every database, the records; then retention. The
 * outcome is recorded either way (account_backups): the success as soon as the records are
 * written (the run is listed from then on), a failure — of the run or of its retention —
 * recorded, then thrown.
 */
export async function backupAccount(db: Database, accountId: number): Promise<BackupRun> {
  const [account] = await db.select({ username: hostingAccounts.username }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId));
  if (!account) throw notFound("Hosting account");
  const { username } = account;
  const run = new Date().toISOString().replace(/[-:.]/g, "").replace("T", "-").replace("Z", "");
  const tags = [ownerTag(accountId), accountTag(username), runTag(run)];
  const databases = (await db.select({ name: customerDatabases.databaseName }).from(customerDatabases).where(eq(customerDatabases.accountId, accountId))).map(
    (database) => database.name,
  );
  const fail = async (error: unknown): Promise<never> => {
    const reason = failureReason(username, error);
    await recordOutcome(db, accountId, { error: reason });
    throw error instanceof AppError ? error : new AppError("VALIDATION", reason);
  };
  let host: Host;
  try {
    host = await hostOfAccount(db, accountId);
    const users = await db.select({ username: databaseUsers.username }).from(databaseUsers).where(eq(databaseUsers.accountId, accountId));
    const machine = await host.run("backup.parts", { username, tags, databases, database_users: users.map((user) => user.username) }, { deadlineMs: BACKUP_DEADLINE_MS });
    const records = JSON.stringify(await accountRecords(db, accountId, machine));
    await host.run("backup.records", { tags, records }, { deadlineMs: BACKUP_DEADLINE_MS });
  } catch (error) {
    return fail(error);
  }
  // Complete and listed: the status says so before retention runs.
  await recordSuccess(db, host, accountId);
  let runs: BackupRun[] = [];
  try {
    await applyRetention(host, accountId);
    runs = await recordSuccess(db, host, accountId);
  } catch (error) {
    return fail(error);
  }
  // As listed; as it was made when the list could not be read.
  return runs.find((candidate) => candidate.id === run) ?? { id: run, time: new Date().toISOString(), size_bytes: null, databases };
}

/**
 * The runs retention keeps (BACKUP_KEEP_LAST/DAILY/WEEKLY/MONTHLY): the `last` newest runs, and
 * the newest run of each of the last `daily` days that have one, of the last `weekly` ISO weeks,
 * of the last `monthly` months — restic's --keep-last/-daily/-weekly/-monthly rule, applied to whole runs (restic's
 * own cannot be: grouped by tags, each run's unique tag puts every snapshot in a group of its own,
 * and it kept them all). Times in UTC.
 */
export function runsToKeep(runs: { id: string; time: string }[], keep: { last: number; daily: number; weekly: number; monthly: number }): Set<string> {
  const newestFirst = [...runs].sort((a, b) => b.time.localeCompare(a.time));
  const kept = new Set(newestFirst.slice(0, keep.last).map((run) => run.id));
  const isoWeek = (date: Date) => {
    const thursday = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 3 - ((date.getUTCDay() + 6) % 7)));
    const firstThursday = new Date(Date.UTC(thursday.getUTCFullYear(), 0, 4));
    return `${thursday.getUTCFullYear()}-W${1 + Math.round((thursday.getTime() - firstThursday.getTime()) / 604_800_000)}`;
  };
  const buckets: [number, (date: Date) => string][] = [
    [keep.daily, (date) => date.toISOString().slice(0, 10)],
    [keep.weekly, isoWeek],
    [keep.monthly, (date) => date.toISOString().slice(0, 7)],
  ];
  for (const [count, bucketOf] of buckets) {
    const seen = new Set<string>();
    for (const run of newestFirst) {
      const bucket = bucketOf(new Date(run.time));
      if (seen.has(bucket)) continue;
      if (seen.size === count) break;
      seen.add(bucket);
      kept.add(run.id);
    }
  }
  return kept;
}

/**
 * Forgets (and prunes) the snapshots of the account's runs retention does not keep, and of runs
 * left incomplete (a run cut short; the backup lease means none is being written now).
 */
async function applyRetention(host: Host, accountId: number): Promise<void> {
  const snapshots = await host.run("backup.snapshots", { tags: [ownerTag(accountId)] });
  const kept = runsToKeep(runsOf(snapshots), env().backup.keep);
  const forgotten = snapshots.filter((snapshot) => !kept.has(tagValue(snapshot, "run:") ?? ""));
  await host.run("backup.forget", { ids: forgotten.map((snapshot) => snapshot.id) }, { deadlineMs: BACKUP_DEADLINE_MS });
}

/**
 * Records a success with the account's runs now and what they take in the repository
 * (deduplicated, compressed data); the runs. A count or size restic could not give (its failure
 * logged) keeps the last one known: the success itself is always recorded.
 */
async function recordSuccess(db: Queryable, host: Host, accountId: number): Promise<BackupRun[]> {
  const runs = await host.run("backup.snapshots", { tags: [ownerTag(accountId)] }).then(runsOf, () => null);
  const sizeBytes = await host.run("backup.stored-bytes", { tag: ownerTag(accountId) }).catch(() => null);
  await recordOutcome(db, accountId, { runs: runs?.length ?? null, sizeBytes });
  return runs ?? [];
}

/**
 * The complete runs of `snapshots` (an account's, or a username's), newest first: a run is
 * complete once its records (written last) are there; one still being written, or cut short,
 * is not a restore point.
 */
export function runsOf(snapshots: ResticSnapshot[]): (BackupRun & { account_id: number })[] {
  const runs = new Map<string, BackupRun & { account_id: number; complete: boolean }>();
  for (const snapshot of snapshots) {
    const id = tagValue(snapshot, "run:");
    if (!id) continue;
    const run = runs.get(id) ?? { id, time: snapshot.time, size_bytes: null, databases: [], account_id: Number(tagValue(snapshot, "account-id:")), complete: false };
    const database = tagValue(snapshot, "db:");
    if (database) run.databases.push(database);
    if (snapshot.tags?.includes("part:records")) run.complete = true;
    runs.set(id, run);
  }
  return [...runs.values()]
    .filter((run) => run.complete)
    .map(({ complete: _complete, ...run }) => run)
    .sort((a, b) => b.id.localeCompare(a.id));
}

/** The account's runs, newest first, as its node's repository holds them. */
export async function listRuns(db: Queryable, accountId: number): Promise<BackupRun[]> {
  const host = await hostOfAccount(db, accountId);
  return runsOf(await host.run("backup.snapshots", { tags: [ownerTag(accountId)] })).map(({ account_id: _owner, ...run }) => run);
}

/**
 * Per account: the last success and failure, the runs kept and their size (GET /api/admin/backups;
 * `accountId`: that account's only, for its page).
 */
export async function backupStatus(db: Queryable, manager: AccountManager, accountId?: number) {
  const rows = await db
    .select({ accountId: hostingAccounts.id, username: hostingAccounts.username, backup: accountBackups })
    .from(hostingAccounts)
    .leftJoin(accountBackups, eq(accountBackups.accountId, hostingAccounts.id))
    .where(and(managedBy(manager), accountId === undefined ? undefined : eq(hostingAccounts.id, accountId)))
    .orderBy(asc(hostingAccounts.username));
  return {
    accounts: rows.map(({ accountId, username, backup }) => ({
      account_id: accountId,
      username,
      last_success_at: backup?.lastSuccessAt?.toISOString() ?? null,
      last_failure_at: backup?.lastFailureAt?.toISOString() ?? null,
      last_error: backup && backup.lastFailureAt && (!backup.lastSuccessAt || backup.lastFailureAt > backup.lastSuccessAt) ? backup.lastError : null,
      snapshots: backup?.snapshots ?? 0,
      size_bytes: backup?.sizeBytes ?? 0,
    })),
  };
}

const LEASE_MS = 10 * 60_000;

/** Takes the backup lease for `ms` (one run per repository at a time); false when another holds it. */
async function takeBackupLease(db: Queryable, holder: string, ms: number): Promise<boolean> {
  const until = new Date(Date.now() + ms);
  await db.insert(backupLease).values({ id: 1, holder: null, expiresAt: new Date(0) }).onConflictDoNothing();
  const taken = await db
    .update(backupLease)
    .set({ holder, expiresAt: until })
    .where(sql`${backupLease.id} = 1 and (${backupLease.expiresAt} < now() or ${backupLease.holder} = ${holder})`)
    .returning({ id: backupLease.id });
  return taken.length === 1;
}

/**
 * Runs `work` holding the backup lease (a row in the database, so across panel instances): renewed
 * while it runs, given back when it ends. null when another run holds it: restic's `forget
 * --prune` needs the repository to itself, so two runs would fail each other.
 */
export async function withBackupLease<T>(db: Queryable, work: () => Promise<T>): Promise<{ result: T } | null> {
  const holder = randomUUID();
  if (!(await takeBackupLease(db, holder, LEASE_MS))) return null;
  const renew = setInterval(() => void takeBackupLease(db, holder, LEASE_MS).catch(() => undefined), LEASE_MS / 2);
  try {
    return { result: await work() };
  } finally {
    clearInterval(renew);
    await db.update(backupLease).set({ expiresAt: new Date(0) }).where(sql`${backupLease.id} = 1 and ${backupLease.holder} = ${holder}`);
  }
}

// ---- for the API, the CLI and the admin UI: the account first, as its manager reaches it ----

async function managedUsername(db: Queryable, manager: AccountManager, accountId: number): Promise<string> {
  return (await getAccount(db, accountId, manager)).username;
}

export async function listAccountRuns(db: Queryable, manager: AccountManager, accountId: number) {
  await managedUsername(db, manager, accountId);
  return { snapshots: await listRuns(db, accountId) };
}

/**
 * POST …/backups: the run starts now and goes on after the answer (202); its outcome is in the
 * status. While another run holds the repository (the nightly one) → 409, try again later.
 */
export async function requestBackup(db: Database, manager: AccountManager, accountId: number): Promise<{ message: string }> {
  const username = await managedUsername(db, manager, accountId);
  // Answered once the lease is held (or refused); the run goes on after the answer.
  await new Promise<void>((started, refused) => {
    withBackupLease(db, async () => {
      started();
      await backupAccount(db, accountId);
    }).then(
      (outcome) => outcome ?? refused(new AppError("CONFLICT", "Another backup run is using the repository; try again when it has ended (GET /api/admin/backups)")),
      (error) => {
        // Before the lease was held: the request's failure. After: the run's, already in the status.
        refused(error);
        console.error(`[backups] ${username}:`, (error as Error).message);
      },
    );
  });
  return { message: `A backup of ${username} has started; GET /api/admin/backups shows its outcome` };
}

/**
 * Every account, one after another (the nightly job, `panel backup run`): the failures, by
 * username. `notBackedUpSince`: only accounts without a success since then (a night's run
 * continued by another instance does not start over).
 */
export async function backupAllAccounts(db: Database, notBackedUpSince?: Date): Promise<Record<string, string>> {
  const accounts = await db
    .select({ id: hostingAccounts.id, username: hostingAccounts.username })
    .from(hostingAccounts)
    .leftJoin(accountBackups, eq(accountBackups.accountId, hostingAccounts.id))
    .where(notBackedUpSince ? sql`${accountBackups.lastSuccessAt} is null or ${accountBackups.lastSuccessAt} < ${notBackedUpSince}` : undefined)
    .orderBy(asc(hostingAccounts.username));
  const failures: Record<string, string> = {};
  for (const account of accounts) {
    await backupAccount(db, account.id).catch((error: Error) => (failures[account.username] = error.message));
  }
  return failures;
}
