import { randomUUID } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { customerDatabases, restoreLeases } from "@/db/schema";
import type { AccountManager } from "@/lib/accounts/manager";
import { getAccount } from "@/lib/accounts/service";
import { createDatabase, deleteDatabase, MAX_DATABASE_NAME, prefixedName } from "@/lib/databases/service";
import { env } from "@/lib/env";
import { AppError, notFound, validationError } from "@/lib/errors";
import { homeOf } from "@/lib/provisioning/home-layout";
import { entryExistsIn, LinkInHomeError, openDirectoryPath, openTrustedDirectory, pathComponents } from "@/lib/provisioning/home-files";
import { freeBytesOf, homeSnapshotEntry, homeSnapshotPath, removeAsUser, restoreIntoDirectory } from "@/lib/provisioning/home-restore";
import { type DatabaseObject, type DumpLoad, loadDatabaseDump, mysqlProvisioner } from "@/lib/provisioning/mysql";
import { restic, resticStream, type ResticSnapshot } from "@/lib/provisioning/restic";
import { RUN_ID } from "./schemas";
import { listRuns, ownerTag, runTag, snapshotsWith, tagValue } from "./service";

// Restores from a run (docs/backups.md "Restore"): a path of the home, a database, or public_html and
// every database. Each runs with no more rights than the customer has: files are written by
// the account's Linux user from restic's own output (lib/provisioning/home-restore.ts), dumps
// are loaded by a MariaDB user whose rights are the target database only
// (lib/provisioning/mysql.ts). One restore per account at a time (a lease in the database, so
// across panel instances: 409 while one runs). A restore is the work of its request: when the
// request ends (its client gone) or RESTORE_DEADLINE_MS passes, its programs are stopped and
// the lease given back; what it had written by then stays.

/** How long a restore may take in its request. */
export const RESTORE_DEADLINE_MS = 60 * 60_000;

/**
 * What a restore's steps stop on: `requestSignal` (the request's, aborted when its client goes
 * away) or the deadline, whichever comes first. The command line passes none of its own.
 */
export function restoreSignal(requestSignal?: AbortSignal): AbortSignal {
  const deadline = AbortSignal.timeout(RESTORE_DEADLINE_MS);
  return requestSignal ? AbortSignal.any([requestSignal, deadline]) : deadline;
}

/** The error of a restore its signal stopped. */
function stopped(signal: AbortSignal): AppError {
  if ((signal.reason as Error | undefined)?.name === "TimeoutError") {
    return new AppError(
      "UNAVAILABLE",
      `The restore took longer than ${RESTORE_DEADLINE_MS / 60_000} minutes and was stopped (what it had written stays): restore a smaller part, or use the command line (panel backup restore)`,
    );
  }
  return new AppError("UNAVAILABLE", "The restore was stopped: its request ended before it was done (what it had written stays)");
}

const throwIfStopped = (signal?: AbortSignal) => {
  if (signal?.aborted) throw stopped(signal);
};

// ---- one restore per account at a time ----

/** A lease lasts this long unless renewed (every half of it while the restore runs). */
const RESTORE_LEASE_INTERVAL = "2 minutes";
const RESTORE_LEASE_RENEW_MS = 60_000;

/** Takes (or renews) the account's restore lease for `holder`; false while another holds it. The database's clock decides, so instances agree. */
async function takeRestoreLease(db: Queryable, accountId: number, holder: string): Promise<boolean> {
  const expiresAt = sql.raw(`now() + interval '${RESTORE_LEASE_INTERVAL}'`);
  const taken = await db
    .insert(restoreLeases)
    .values({ accountId, holder, expiresAt })
    .onConflictDoUpdate({
      target: restoreLeases.accountId,
      set: { holder, expiresAt },
      setWhere: sql`${restoreLeases.expiresAt} < now() or ${restoreLeases.holder} = ${holder}`,
    })
    .returning({ accountId: restoreLeases.accountId });
  return taken.length === 1;
}

/** Runs `work` holding the account's restore lease; 409 while another restore of the account runs (on any instance). */
export async function withRestoreLease<T>(db: Queryable, accountId: number, work: () => Promise<T>): Promise<T> {
  const holder = randomUUID();
  if (!(await takeRestoreLease(db, accountId, holder))) {
    throw new AppError("CONFLICT", "A restore of this account is already running; try again when it has ended");
  }
  const renew = setInterval(() => void takeRestoreLease(db, accountId, holder).catch(() => undefined), RESTORE_LEASE_RENEW_MS);
  try {
    return await work();
  } finally {
    clearInterval(renew);
    await db.delete(restoreLeases).where(and(eq(restoreLeases.accountId, accountId), eq(restoreLeases.holder, holder)));
  }
}

// ---- a run's parts ----

/**
 * The run's snapshots by part (`part:home`, `part:records`, `db:<name>`), of the account's own
 * runs only. A run without its records (written last) did not complete: it is neither listed
 * nor restorable.
 */
async function runParts(accountId: number, run: string): Promise<Map<string, ResticSnapshot>> {
  if (!RUN_ID.test(run)) throw validationError("snapshot", "names no backup of this account");
  const parts = new Map<string, ResticSnapshot>();
  for (const snapshot of await snapshotsWith([ownerTag(accountId), runTag(run)])) {
    const database = tagValue(snapshot, "db:");
    const part = database ? `db:${database}` : snapshot.tags?.find((tag) => tag.startsWith("part:"));
    if (part) parts.set(part, snapshot);
  }
  if (parts.size === 0) throw validationError("snapshot", "names no backup of this account");
  if (!parts.has("part:records")) throw validationError("snapshot", "names a backup that did not complete");
  return parts;
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

const megabytes = (bytes: number) => `${Math.ceil(bytes / 1048576)} MB`;

// ---- files ----

/**
 * Restores one path of the home (a file or a folder) from a run, into its place or (`to`, a path
 * of the home that does not exist) beside it.
 */
async function restorePath(account: { id: number; username: string }, run: string, relative: string, to: string | undefined, signal?: AbortSignal): Promise<{ message: string }> {
  const parts = checkedRelativePath(relative, "path");
  const beside = to === undefined ? undefined : checkedRelativePath(to, "to");
  const home = (await runParts(account.id, run)).get("part:home");
  if (!home) throw validationError("snapshot", "holds no files");
  if (!(await restoreHomePath(account.username, home, parts, beside, signal))) throw validationError("path", "is not in this backup");
  return { message: `${relative} restored${to === undefined ? "" : ` as ${to}`} from the backup of ${home.time}` };
}

/**
 * `parts` (checked: relative, no `..`) of a home snapshot back into the account's home, into its
 * place or at `beside` (which must not exist), written by the account's Linux user. The
 * destination's folders are walked without following a link (one on the way → 422, nothing
 * written), and the backup's size must fit in the home file system's free space (422). A
 * folder comes back over what is there (the backup's files replace theirs, others stay); a file
 * replaces the one there once it is whole. False when the snapshot does not hold the path.
 */
export async function restoreHomePath(username: string, snapshot: ResticSnapshot, parts: string[], beside?: string[], signal?: AbortSignal): Promise<boolean> {
  if (!env().systemUsers) throw new AppError("VALIDATION", "Restoring files needs SYSTEM_USERS=1 (the files are written by the account's user)");
  const destination = beside ?? parts;
  const field = beside ? "to" : "path";
  const home = homeOf(username);
  const source = homeSnapshotPath(snapshot, home, parts);
  const entry = await homeSnapshotEntry(username, source, signal);
  throwIfStopped(signal);
  if (!entry) return false;
  if (entry.kind === "other") throw validationError("path", "is a link or a special file in the backup: restore the folder that holds it");
  const homes = await openTrustedDirectory(path.dirname(home));
  if (!homes) throw notFound("Home");
  let parent: FileHandle | null = null;
  try {
    parent = await openDirectoryPath(homes, path.join(path.basename(home), ...destination.slice(0, -1)));
    if (!parent) throw validationError(field, "lies in a folder that no longer exists: restore that folder");
    const name = destination.at(-1)!;
    if (beside && (await entryExistsIn(parent, name))) throw validationError("to", "already exists: name a path that does not");
    const free = await freeBytesOf(parent);
    if (entry.bytes > free) throw validationError(field, `needs ${megabytes(entry.bytes)} and the home's file system has ${megabytes(free)} free`);
    let outcome;
    try {
      outcome = await restoreIntoDirectory({ username, source, entry, parent, name, signal });
    } finally {
      // A folder made beside its place and left half written goes again, removed by the account's user.
      if (outcome !== "restored" && beside && entry.kind === "folder") await removeAsUser(username, parent, name);
    }
    if (outcome === "restored") return true;
    throwIfStopped(signal);
    if (outcome === "a folder is in the way") throw validationError(field, "is a folder now: restore the file beside it (to)");
    throw validationError(field, "could not be written by the account (its disk quota, or something there it may not replace?)");
  } catch (error) {
    if (error instanceof LinkInHomeError) throw error.forField(field);
    throw error;
  } finally {
    await parent?.close();
    await homes.close();
  }
}

// ---- databases ----

/**
 * Restores one database of the account from a run: its dump loaded into the same database or
 * `into` another of the account's (made, within the plan, when it does not exist; removed again
 * when the load fails). The answer names the routines, views, triggers and events that did not
 * come back (a load makes none under another definer).
 */
async function restoreDatabase(
  db: Database,
  account: { id: number; username: string },
  run: string,
  database: string,
  into: string | undefined,
  signal?: AbortSignal,
): Promise<{ message: string }> {
  const owned = async (name: string) =>
    (await db.select({ id: customerDatabases.id }).from(customerDatabases).where(and(eq(customerDatabases.accountId, account.id), eq(customerDatabases.databaseName, name))))[0];
  const parts = await runParts(account.id, run);
  const snapshot = parts.get(`db:${database}`);
  if (!snapshot) throw validationError("database", "is not in this backup");
  const target = into === undefined ? database : prefixedName(account, into, "into", MAX_DATABASE_NAME);
  const exists = Boolean(await owned(target));
  if (!exists && into === undefined) throw validationError("database", "is no longer a database of this account: name the database to make for it (into)");
  const made = exists ? null : await createDatabase(db, account, { database_name: target });
  let load: DumpLoad;
  try {
    load = await loadDump(snapshot, target, signal);
  } catch (error) {
    if (made) await deleteDatabase(db, account.id, made.id).catch(() => undefined);
    throw signal?.aborted ? stopped(signal) : error;
  }
  const restored = `Database ${database} restored${target === database ? "" : ` into ${target}`} from the backup of ${snapshot.time}`;
  const missing = await notBroughtBack(await listedObjects(parts.get("part:records")!, database), target, load);
  return { message: missing ? `${restored}; ${missing}` : restored };
}

/**
 * The dump of a `db:` snapshot streamed from restic into MariaDB's `into` (its tables replaced),
 * loaded as a user with rights on `into` only (lib/provisioning/mysql.ts).
 */
export async function loadDump(snapshot: ResticSnapshot, into: string, signal?: AbortSignal): Promise<DumpLoad> {
  const database = tagValue(snapshot, "db:");
  const { stdout, done } = await resticStream(["dump", "--no-lock", snapshot.id, `/${database}.sql`], signal);
  const [dumped, loaded] = await Promise.allSettled([done, loadDatabaseDump(into, stdout, signal)]);
  // restic's failure first: a load that "succeeded" on a cut-off dump is not a restore.
  if (dumped.status === "rejected") throw dumped.reason;
  if (loaded.status === "rejected") throw loaded.reason;
  return loaded.value;
}

/** One routine, view, trigger or event of a database as records.json lists it (backups since it was kept). */
export const databaseObjectRecord = z.object({ database: z.string(), type: z.string(), name: z.string(), definer: z.string() });
type DatabaseObjectRecord = z.output<typeof databaseObjectRecord>;

/** What records.json (the `part:records` snapshot) lists for `database`; undefined for a run from before that list, or records that cannot be read. */
async function listedObjects(records: ResticSnapshot, database: string): Promise<DatabaseObjectRecord[] | undefined> {
  try {
    const parsed = z.object({ database_objects: z.array(databaseObjectRecord).optional() }).safeParse(JSON.parse(await restic(["dump", "--no-lock", records.id, "/records.json"])));
    return parsed.success ? parsed.data.database_objects?.filter((object) => object.database === database) : undefined;
  } catch (error) {
    console.error(`[backups] the records of the run of ${database} could not be read: ${(error as Error).message}`);
    return undefined;
  }
}

/**
 * What a load could not bring back, in words for the answer (null: nothing): the objects
 * `listed` for the dumped database that `target` does not have now; without a list (a run from
 * before it was kept), how many statements the server refused.
 */
export async function notBroughtBack(listed: DatabaseObjectRecord[] | undefined, target: string, load: DumpLoad): Promise<string | null> {
  const why = "a restore makes no routine, view, trigger or event under another definer: make them again as one of the account's database users";
  if (!listed) return load.refused ? `${load.refused} statement(s) of the dump were refused (${why}, and nothing of another database)` : null;
  const present = new Set((await mysqlProvisioner()!.databaseObjects(target)).map((object: DatabaseObject) => `${object.type} ${object.name}`));
  const missing = listed.filter((object) => !present.has(`${object.type} ${object.name}`));
  if (!missing.length) return null;
  return `not brought back: ${missing.map((object) => `${object.type.toLowerCase()} ${object.name}`).join(", ")} (${why})`;
}

// ---- for the API, the CLI and the admin UI ----

/**
 * A restore from one run: `database` (into itself, or `into` another name), `path` (into its
 * place, or `to` another), or neither: public_html and every database of the run (the home's
 * other directories are the panel's own, made again by it). One per account at a time (409);
 * stopped when `signal` aborts.
 */
export async function restoreFromRun(
  db: Database,
  account: { id: number; username: string },
  input: { snapshot: string; database?: string; into?: string; path?: string; to?: string },
  signal?: AbortSignal,
): Promise<{ message: string }> {
  return withRestoreLease(db, account.id, async () => {
    if (input.database) return restoreDatabase(db, account, input.snapshot, input.database, input.into, signal);
    if (input.path) return restorePath(account, input.snapshot, input.path, input.to, signal);
    const run = (await listRuns(account.id)).find((candidate) => candidate.id === input.snapshot);
    if (!run) throw validationError("snapshot", "names no backup of this account");
    const messages = [(await restorePath(account, run.id, "public_html", undefined, signal)).message];
    for (const database of run.databases) {
      throwIfStopped(signal);
      messages.push((await restoreDatabase(db, account, run.id, database, undefined, signal)).message);
    }
    return { message: messages.join(". ") };
  });
}

export async function restoreManagedAccount(
  db: Database,
  manager: AccountManager,
  accountId: number,
  input: { snapshot: string; database?: string; into?: string; path?: string; to?: string },
  signal?: AbortSignal,
) {
  const account = await getAccount(db, accountId, manager);
  return restoreFromRun(db, account, input, signal);
}
