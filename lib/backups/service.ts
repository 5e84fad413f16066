import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
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
import { createDatabase, deleteDatabase, MAX_DATABASE_NAME, prefixedName } from "@/lib/databases/service";
import { env } from "@/lib/env";
import { AppError, notFound, validationError } from "@/lib/errors";
import { homeOf } from "@/lib/hosting/home";
import { mariadbClientOptions, mysqlProvisioner } from "@/lib/provisioning/mysql";
import { entryExistsIn, LinkInHomeError, openDirectoryPath, openTrustedDirectory, pathComponents } from "@/lib/provisioning/home-files";
import { ensureRepository, isMissingRepository, restic, resticStream, snapshotsTagged, type ResticSnapshot } from "@/lib/provisioning/restic";
import { childExit, exitReason, startAsUser, startChild, toolEnv } from "@/lib/provisioning/system";
import { RUN_ID } from "./schemas";

// Backups (README "Backups"): restic, one restore point ("run") per account per backup. restic
// 0.14 (Debian 12) cannot put a file tree and a program's output in one snapshot, so a run is
// several snapshots sharing the tag `run:<id>`: `home` (the home directory), one `db:<name>`
// per database (mariadb-dump --single-transaction piped into `restic backup --stdin`: a
// consistent dump, never on disk in clear) and `records` (the panel's rows of the account as
// JSON). All carry `account:<username>`. A failure records its error in account_backups and
// removes nothing: older runs stay until `restic forget` (retention) drops them.

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
async function accountRecords(db: Queryable, accountId: number) {
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
  const server = mysqlProvisioner();
  return {
    format: RECORDS_FORMAT,
    account: account.account,
    plan: account.plan,
    domains: domainRows,
    dns_records: domainRows.length ? await db.select().from(dnsRecords).where(inArray(dnsRecords.domainId, domainRows.map((row) => row.id))) : [],
    databases: databaseRows,
    database_users: await Promise.all(userRows.map(async (row) => ({ ...row, password_hash: (await server?.passwordHash(row.username)) ?? null }))),
    database_grants: databaseRows.length ? await db.select().from(databaseGrants).where(inArray(databaseGrants.databaseId, databaseRows.map((row) => row.id))) : [],
    php_settings: await db.select().from(phpSettings).where(eq(phpSettings.accountId, accountId)),
    cron_jobs: await db.select().from(cronJobs).where(eq(cronJobs.accountId, accountId)),
    ssh_keys: await db.select().from(sshKeys).where(eq(sshKeys.accountId, accountId)),
  };
}

/** The version of the records document (records.json) this panel writes. */
export const RECORDS_FORMAT = 1;

/** mariadb-dump of one database piped into restic; the dump's own failure fails the snapshot. */
async function backupDatabase(database: string, tags: string[]): Promise<void> {
  const connection = (await mariadbClientOptions())!;
  const dump = startChild("mariadb-dump", [connection, "--single-transaction", "--routines", "--triggers", "--events", "--databases", database], { env: toolEnv() });
  const dumped = childExit(dump).then(
    (exit) => {
      if (exit.code !== 0) throw new AppError("VALIDATION", `mariadb-dump of ${database} failed: ${exitReason(exit)}`);
    },
    (error: Error) => {
      throw new AppError("VALIDATION", `mariadb-dump could not run: ${error.message}`);
    },
  );
  const stored = restic(["backup", "--stdin", "--stdin-filename", `${database}.sql`, ...tags.flatMap((tag) => ["--tag", tag])], dump.stdout!);
  const [dumpResult, storeResult] = await Promise.allSettled([dumped, stored]);
  if (dumpResult.status === "rejected") {
    // A snapshot of a half dump must not pass for a backup: it is forgotten at once.
    await forgetRun(tags);
    throw dumpResult.reason;
  }
  if (storeResult.status === "rejected") throw storeResult.reason;
}

async function forgetRun(tags: string[]): Promise<void> {
  const run = tags.find((tag) => tag.startsWith("run:"));
  if (run) await restic(["forget", "--tag", run]).catch(() => undefined);
}

/** One write per outcome: the status never shows a success without its restore points. */
async function recordOutcome(db: Queryable, accountId: number, outcome: { error: string } | { runs: BackupRun[]; sizeBytes: number }): Promise<void> {
  const now = new Date();
  const fields =
    "error" in outcome
      ? { lastFailureAt: now, lastError: outcome.error }
      : { lastSuccessAt: now, snapshots: outcome.runs.length, sizeBytes: outcome.sizeBytes };
  await db.insert(accountBackups).values({ accountId, ...fields }).onConflictDoUpdate({ target: accountBackups.accountId, set: fields });
}

/**
 * One backup run of the account: home, every database, the records; then retention. The
 * outcome is recorded either way (account_backups); a failure throws after recording it.
 */
export async function backupAccount(db: Database, accountId: number): Promise<BackupRun> {
  const [account] = await db.select({ username: hostingAccounts.username }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId));
  if (!account) throw notFound("Hosting account");
  const { username } = account;
  const run = new Date().toISOString().replace(/[-:.]/g, "").replace("T", "-").replace("Z", "");
  const tags = [ownerTag(accountId), accountTag(username), runTag(run)];
  try {
    await ensureRepository();
    const home = homeOf(username);
    if (await fs.stat(home).then(() => true, () => false)) {
      await restic(["backup", "--one-file-system", ...[...tags, "part:home"].flatMap((tag) => ["--tag", tag]), home]);
    }
    const databases = await db.select({ name: customerDatabases.databaseName }).from(customerDatabases).where(eq(customerDatabases.accountId, accountId));
    if (databases.length && !env().mysqlProvisionUrl) throw new AppError("VALIDATION", "the account has databases but MYSQL_PROVISION_URL is not set");
    for (const { name } of databases) await backupDatabase(name, [...tags, `db:${name}`]);
    const records = JSON.stringify(await accountRecords(db, accountId));
    await restic(["backup", "--stdin", "--stdin-filename", "records.json", ...[...tags, "part:records"].flatMap((tag) => ["--tag", tag])], Readable.from([records]));
    const { keep } = env().backup;
    await restic(["forget", "--prune", "--tag", ownerTag(accountId), "--group-by", "tags", "--keep-daily", String(keep.daily), "--keep-weekly", String(keep.weekly), "--keep-monthly", String(keep.monthly)]);
  } catch (error) {
    const message = error instanceof AppError ? error.message : (error as Error).message;
    await recordOutcome(db, accountId, { error: message });
    throw error instanceof AppError ? error : new AppError("VALIDATION", `The backup of ${username} failed: ${message}`);
  }
  const runs = await listRuns(accountId);
  // What the account's restore points take in the repository (deduplicated, compressed data).
  const stats = JSON.parse(await restic(["stats", "--no-lock", "--json", "--mode", "raw-data", "--tag", ownerTag(accountId)])) as { total_size?: number };
  await recordOutcome(db, accountId, { runs, sizeBytes: stats.total_size ?? 0 });
  return runs.find((candidate) => candidate.id === run)!;
}

/** The snapshots with all of `tags`; none while the repository has not been made yet. */
export async function snapshotsWith(tags: string[]): Promise<ResticSnapshot[]> {
  return snapshotsTagged(tags.join(",")).catch((error) => {
    if (isMissingRepository(error)) return [];
    throw error;
  });
}

/** The runs of the snapshots with `tag` (an account's, or a username's), newest first. */
export async function runsTagged(tag: string): Promise<(BackupRun & { account_id: number })[]> {
  const runs = new Map<string, BackupRun & { account_id: number }>();
  for (const snapshot of await snapshotsWith([tag])) {
    const id = tagValue(snapshot, "run:");
    if (!id) continue;
    const run = runs.get(id) ?? { id, time: snapshot.time, size_bytes: null, databases: [], account_id: Number(tagValue(snapshot, "account-id:")) };
    const database = tagValue(snapshot, "db:");
    if (database) run.databases.push(database);
    runs.set(id, run);
  }
  return [...runs.values()].sort((a, b) => b.id.localeCompare(a.id));
}

/** The account's runs, newest first. */
export async function listRuns(accountId: number): Promise<BackupRun[]> {
  return (await runsTagged(ownerTag(accountId))).map(({ account_id: _owner, ...run }) => run);
}

async function snapshotOf(accountId: number, run: string, part: string): Promise<ResticSnapshot | null> {
  if (!RUN_ID.test(run)) throw validationError("snapshot", "names no backup of this account");
  const snapshots = await snapshotsWith([ownerTag(accountId), runTag(run)]);
  if (snapshots.length === 0) throw validationError("snapshot", "names no backup of this account");
  return snapshots.find((snapshot) => snapshot.tags?.includes(part)) ?? null;
}

/** A path in a restore request (`field`): relative to the home, no `..`, no absolute path, no control character. */
function checkedRelativePath(relative: string, field: string): string[] {
  if (!relative || relative.startsWith("/") || /[\u0000-\u001f]/.test(relative)) throw validationError(field, "must be a path relative to the home");
  try {
    const parts = pathComponents(relative);
    if (parts.length === 0) throw new Error("empty");
    return parts;
  } catch {
    throw validationError(field, "must be a path inside the home (no ..)");
  }
}

/**
 * One step of a restore (a command without a shell). Its failure is logged with the tool's own
 * words, which name server paths, and answered with `what` it could not do.
 */
async function restoreStep(command: string, args: string[], what: string, asUser?: string): Promise<void> {
  const stdio = ["ignore", "ignore", "pipe"] as const;
  const exit = await childExit(asUser ? startAsUser(asUser, command, args, { stdio: [...stdio] }) : startChild(command, args, { env: toolEnv(), stdio: [...stdio] }));
  if (exit.code === 0) return;
  console.error(`[backups] ${command} failed: ${exitReason(exit)}`);
  throw new AppError("VALIDATION", `The restore could not ${what}`);
}

/**
 * Restores one path of the home (a file or a folder) from a run, into its place or (`to`, a path
 * of the home that does not exist) beside it. restic restores into a staging directory of the
 * panel's; the copy into the home runs as the account's user (so it can write nothing the
 * customer could not), after the destination's directories were walked without following a
 * link (a link on the way → 422, nothing written).
 */
export async function restorePath(account: { id: number; username: string }, run: string, relative: string, to?: string): Promise<{ message: string }> {
  const parts = checkedRelativePath(relative, "path");
  const beside = to === undefined ? undefined : checkedRelativePath(to, "to");
  const snapshot = await snapshotOf(account.id, run, "part:home");
  if (!snapshot) throw validationError("snapshot", "holds no files");
  if (!(await restoreHomePath(account.username, snapshot, parts, beside))) throw validationError("path", "is not in this backup");
  return { message: `${relative} restored${to === undefined ? "" : ` as ${to}`} from the backup of ${snapshot.time}` };
}

/**
 * The copy of `parts` (checked: relative, no `..`) from a home snapshot into the account's home:
 * into its place, or at `beside` (which must not exist): restorePath's steps. False when the
 * snapshot does not hold the path.
 */
export async function restoreHomePath(username: string, snapshot: ResticSnapshot, parts: string[], beside?: string[]): Promise<boolean> {
  if (!env().systemUsers) throw new AppError("VALIDATION", "Restoring files needs SYSTEM_USERS=1 (the copy runs as the account's user)");
  const destination = beside ?? parts;
  const field = beside ? "to" : "path";
  const home = homeOf(username);
  const homes = await openTrustedDirectory(path.dirname(home));
  if (!homes) throw notFound("Home");
  try {
    const parent = await openDirectoryPath(homes, path.join(path.basename(home), ...destination.slice(0, -1)));
    if (!parent) throw validationError(field, "lies in a folder that no longer exists: restore that folder");
    try {
      if (beside && (await entryExistsIn(parent, destination.at(-1)!))) throw validationError("to", "already exists: name a path that does not");
    } finally {
      await parent.close();
    }
  } catch (error) {
    if (error instanceof LinkInHomeError) throw error.forField(field);
    throw error;
  } finally {
    await homes.close();
  }
  // Beside the homes (root's, which every account may traverse): the copy, run as the account's
  // user, must reach what restic restored. The snapshot holds the home under the path it had
  // then (snapshot.paths), which a renamed HOME_ROOT does not change.
  const staging = await fs.mkdtemp(path.join(path.dirname(home), ".restore-"));
  try {
    await fs.chmod(staging, 0o711);
    const source = path.join(snapshot.paths[0] ?? home, ...parts);
    await restic(["restore", "--no-lock", snapshot.id, "--target", staging, "--include", source]);
    const restored = path.join(staging, source);
    if (!(await fs.lstat(restored).then(() => true, () => false))) return false;
    // restic restores the snapshot's owners and modes: the account's of then — another uid when
    // the account was terminated and made again. In the staging copy (root's, nothing outside)
    // the tree becomes the account's of now (links changed, never followed), and the folders
    // leading to it, restic's copies of the home's path, are opened for its user to walk.
    await restoreStep("chown", ["-R", "-h", `${username}:${username}`, restored], "give the restored files to the account");
    for (let dir = path.dirname(restored); dir.startsWith(`${staging}/`); dir = path.dirname(dir)) {
      if ((await fs.lstat(dir)).isDirectory()) await fs.chmod(dir, 0o711);
    }
    // As the account's user: its privileges bound what the copy can write.
    await restoreStep("cp", ["-a", "--no-target-directory", "--remove-destination", restored, path.join(home, ...destination)], "copy the files into the home (is something there the account cannot replace?)", username);
    return true;
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/**
 * Restores one database of the account from a run: its dump streamed from restic into MariaDB,
 * into the same database or `into` another of the account's (made, within the plan, when it
 * does not exist; removed again when the load fails).
 */
export async function restoreDatabase(
  db: Database,
  account: { id: number; username: string },
  run: string,
  database: string,
  into?: string,
): Promise<{ message: string }> {
  const owned = async (name: string) =>
    (await db.select({ id: customerDatabases.id }).from(customerDatabases).where(and(eq(customerDatabases.accountId, account.id), eq(customerDatabases.databaseName, name))))[0];
  const snapshot = await snapshotOf(account.id, run, `db:${database}`);
  if (!snapshot) throw validationError("database", "is not in this backup");
  const target = into === undefined ? database : prefixedName(account, into, "into", MAX_DATABASE_NAME);
  const exists = Boolean(await owned(target));
  if (!exists && into === undefined) throw validationError("database", "is no longer a database of this account: name the database to make for it (into)");
  const made = exists ? null : await createDatabase(db, account, { database_name: target });
  try {
    await loadDump(snapshot, database, target);
  } catch (error) {
    if (made) await deleteDatabase(db, account.id, made.id).catch(() => undefined);
    throw error;
  }
  return { message: `Database ${database} restored${target === database ? "" : ` into ${target}`} from the backup of ${snapshot.time}` };
}

/**
 * mariadb-dump's lines that name the dumped database itself (`CREATE DATABASE`, `USE`, `ALTER
 * DATABASE`): dropped, so the dump loads into whichever database the load names. Other lines
 * never start so: a row's newlines are escaped in its INSERT.
 */
const DATABASE_STATEMENT = /^(\/\*!\d+\s+)?(CREATE DATABASE|USE|ALTER DATABASE)\b/i;

function withoutDatabaseStatements(): Transform {
  let rest = "";
  const kept = (lines: string[]) => lines.filter((line) => !DATABASE_STATEMENT.test(line)).map((line) => `${line}\n`).join("");
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const lines = (rest + chunk.toString("utf8")).split("\n");
      rest = lines.pop()!;
      done(null, kept(lines));
    },
    flush(done) {
      done(null, rest && !DATABASE_STATEMENT.test(rest) ? rest : "");
    },
  });
}

/** The dump of `database` in `snapshot` streamed from restic into MariaDB's `into` (its tables replaced). */
export async function loadDump(snapshot: ResticSnapshot, database: string, into: string = database): Promise<void> {
  const connection = await mariadbClientOptions();
  if (!connection) throw new AppError("VALIDATION", "MYSQL_PROVISION_URL is not set");
  const { stdout, done } = await resticStream(["dump", "--no-lock", snapshot.id, `/${database}.sql`]);
  const load = startChild("mariadb", [connection, into], { env: toolEnv(), stdio: ["pipe", "ignore", "pipe"] });
  const loaded = childExit(load).then(
    (exit) => {
      if (exit.code !== 0) throw new AppError("VALIDATION", `The dump of ${database} did not load: ${exitReason(exit)}`);
    },
    (error: Error) => {
      throw new AppError("VALIDATION", `mariadb could not run: ${error.message}`);
    },
  );
  load.stdin!.on("error", () => undefined); // mariadb gone: its exit says why
  stdout.pipe(withoutDatabaseStatements()).pipe(load.stdin!);
  await Promise.all([done, loaded]);
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
  return { snapshots: await listRuns(accountId) };
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
 * A restore from one run: `database` (into itself, or `into` another name), `path` (into its
 * place, or `to` another), or neither:
 * public_html and every database of the run (the home's other directories are the panel's own,
 * made again by it).
 */
export async function restoreFromRun(
  db: Database,
  account: { id: number; username: string },
  input: { snapshot: string; database?: string; into?: string; path?: string; to?: string },
): Promise<{ message: string }> {
  if (input.database) return restoreDatabase(db, account, input.snapshot, input.database, input.into);
  if (input.path) return restorePath(account, input.snapshot, input.path, input.to);
  const run = (await listRuns(account.id)).find((candidate) => candidate.id === input.snapshot);
  if (!run) throw validationError("snapshot", "names no backup of this account");
  await restorePath(account, run.id, "public_html");
  for (const database of run.databases) await restoreDatabase(db, account, run.id, database);
  return { message: `public_html and ${run.databases.length} database(s) restored from the backup of ${run.time}` };
}

export async function restoreManagedAccount(
  db: Database,
  manager: AccountManager,
  accountId: number,
  input: { snapshot: string; database?: string; into?: string; path?: string; to?: string },
) {
  const account = await getAccount(db, accountId, manager);
  return restoreFromRun(db, account, input);
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
