import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { customerDatabases, restoreLeases } from "@/db/schema";
import type { AccountManager } from "@/lib/accounts/manager";
import { getAccount } from "@/lib/accounts/service";
import { createDatabase, deleteDatabase, MAX_DATABASE_NAME, prefixedName } from "@/lib/databases/service";
import { AppError, validationError } from "@/lib/errors";
import { type Host, hostOfAccount } from "@/lib/nodes/hosts";
import { COMMAND_LINE_RESTORE_DEADLINE_MS, type DumpRestore, RESTORE_DEADLINE_MS, restoreStopped } from "@/lib/provisioning/backup-runs";
import { pathComponents } from "@/lib/provisioning/home-files";
import type { ResticSnapshot } from "@/lib/provisioning/restic";
import { RUN_ID } from "./schemas";
import { listRuns, ownerTag, runTag, tagValue } from "./service";

// Restores from a run (docs/backups.md "Restore"): a path of the home, a database, or public_html and
// every database, carried out on the machine that hosts the account, from its repository
// (lib/provisioning/backup-runs.ts). Each runs with no more rights than the customer has: files
// are written by the account's Linux user from restic's own output
// (lib/provisioning/home-restore.ts), dumps are loaded by a MariaDB user whose rights are the
// target database only (lib/provisioning/mysql.ts). One restore per account at a time (a lease
// in the database, so across panel instances: 409 while one runs). A restore is the work of its
// request: when the request ends (its client gone) or RESTORE_DEADLINE_MS passes, its programs
// are stopped and the lease given back; what it had written by then stays. (On another node a
// restore whose client went away goes on until its deadline: the node is not told.)

/**
 * What a restore's steps stop on: `requestSignal` (the request's, aborted when its client goes
 * away) or the deadline, whichever comes first. The command line passes none of its own.
 */
export function restoreSignal(requestSignal?: AbortSignal): AbortSignal {
  const deadline = AbortSignal.timeout(RESTORE_DEADLINE_MS);
  return requestSignal ? AbortSignal.any([requestSignal, deadline]) : deadline;
}

const throwIfStopped = (signal?: AbortSignal) => {
  if (signal?.aborted) throw restoreStopped(signal);
};

/**
 * A restore's step on the account's machine, stopped with the restore (its error then says so):
 * a request's (`signal`) within RESTORE_DEADLINE_MS, the command line's within a day.
 */
export async function restoreStep<Result>(signal: AbortSignal | undefined, step: (long: { deadlineMs: number; signal?: AbortSignal }) => Promise<Result>): Promise<Result> {
  try {
    return await step({ deadlineMs: signal ? RESTORE_DEADLINE_MS : COMMAND_LINE_RESTORE_DEADLINE_MS, signal });
  } catch (error) {
    if (signal?.aborted) throw restoreStopped(signal);
    throw error;
  }
}

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
async function runParts(host: Host, accountId: number, run: string): Promise<Map<string, ResticSnapshot>> {
  if (!RUN_ID.test(run)) throw validationError("snapshot", "names no backup of this account");
  const parts = new Map<string, ResticSnapshot>();
  for (const snapshot of await host.run("backup.snapshots", { tags: [ownerTag(accountId), runTag(run)] })) {
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

// ---- files ----

/**
 * Restores one path of the home (a file or a folder) from a run, into its place or (`to`, a path
 * of the home that does not exist) beside it.
 */
async function restorePath(
  host: Host,
  account: { id: number; username: string },
  run: string,
  relative: string,
  to: string | undefined,
  signal?: AbortSignal,
): Promise<{ message: string }> {
  const parts = checkedRelativePath(relative, "path");
  const beside = to === undefined ? null : checkedRelativePath(to, "to");
  const home = (await runParts(host, account.id, run)).get("part:home");
  if (!home) throw validationError("snapshot", "holds no files");
  const restored = await restoreStep(signal, (long) => host.run("restore.home-path", { username: account.username, snapshot: home, parts, beside }, long));
  if (!restored) throw validationError("path", "is not in this backup");
  return { message: `${relative} restored${to === undefined ? "" : ` as ${to}`} from the backup of ${home.time}` };
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
  host: Host,
  account: { id: number; username: string },
  run: string,
  database: string,
  into: string | undefined,
  signal?: AbortSignal,
): Promise<{ message: string }> {
  const owned = async (name: string) =>
    (await db.select({ id: customerDatabases.id }).from(customerDatabases).where(and(eq(customerDatabases.accountId, account.id), eq(customerDatabases.databaseName, name))))[0];
  const parts = await runParts(host, account.id, run);
  const snapshot = parts.get(`db:${database}`);
  if (!snapshot) throw validationError("database", "is not in this backup");
  const target = into === undefined ? database : prefixedName(account, into, "into", MAX_DATABASE_NAME);
  const exists = Boolean(await owned(target));
  if (!exists && into === undefined) throw validationError("database", "is no longer a database of this account: name the database to make for it (into)");
  const made = exists ? null : await createDatabase(db, account, { database_name: target });
  let load: DumpRestore;
  try {
    load = await restoreStep(signal, (long) => host.run("restore.dump", { snapshot, database, into: target }, long));
  } catch (error) {
    if (made) await deleteDatabase(db, account.id, made.id).catch(() => undefined);
    throw error;
  }
  const restored = `Database ${database} restored${target === database ? "" : ` into ${target}`} from the backup of ${snapshot.time}`;
  const missing = notBroughtBack(await listedObjects(host, parts.get("part:records")!, database), load);
  return { message: missing ? `${restored}; ${missing}` : restored };
}

/** One routine, view, trigger or event of a database as records.json lists it (backups since it was kept). */
export const databaseObjectRecord = z.object({ database: z.string(), type: z.string(), name: z.string(), definer: z.string() });
type DatabaseObjectRecord = z.output<typeof databaseObjectRecord>;

/** What records.json (the `part:records` snapshot) lists for `database`; undefined for a run from before that list, or records that cannot be read. */
async function listedObjects(host: Host, records: ResticSnapshot, database: string): Promise<DatabaseObjectRecord[] | undefined> {
  try {
    const text = await host.run("backup.read-records", { snapshot_id: records.id });
    const parsed = z.object({ database_objects: z.array(databaseObjectRecord).optional() }).safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.database_objects?.filter((object) => object.database === database) : undefined;
  } catch (error) {
    console.error(`[backups] the records of the run of ${database} could not be read: ${(error as Error).message}`);
    return undefined;
  }
}

/**
 * What a load could not bring back, in words for the answer (null: nothing): the objects
 * `listed` for the dumped database that the target does not have after the load (`present`);
 * without a list (a run from before it was kept), how many statements the server refused.
 */
export function notBroughtBack(listed: DatabaseObjectRecord[] | undefined, load: DumpRestore): string | null {
  const why = "a restore makes no routine, view, trigger or event under another definer: make them again as one of the account's database users";
  if (!listed) return load.refused ? `${load.refused} statement(s) of the dump were refused (${why}, and nothing of another database)` : null;
  const present = new Set(load.present);
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
    const host = await hostOfAccount(db, account.id);
    if (input.database) return restoreDatabase(db, host, account, input.snapshot, input.database, input.into, signal);
    if (input.path) return restorePath(host, account, input.snapshot, input.path, input.to, signal);
    const run = (await listRuns(db, account.id)).find((candidate) => candidate.id === input.snapshot);
    if (!run) throw validationError("snapshot", "names no backup of this account");
    const messages = [(await restorePath(host, account, run.id, "public_html", undefined, signal)).message];
    for (const database of run.databases) {
      throwIfStopped(signal);
      messages.push((await restoreDatabase(db, host, account, run.id, database, undefined, signal)).message);
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
