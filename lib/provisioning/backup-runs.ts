import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { env } from "@/lib/env";
import { AppError, notFound, validationError } from "@/lib/errors";
import { HOME_ARCHIVE, startHomeArchive } from "./home-backup";
import { entryExistsIn, LinkInHomeError, openDirectoryPath, openTrustedDirectory } from "./home-files";
import { fileOwner, homeOf } from "./home-layout";
import { freeBytesOf, homeSnapshotEntry, homeSnapshotPath, removeAsUser, restoreIntoDirectory } from "./home-restore";
import { type DatabaseObject, databaseName, type DumpLoad, loadDatabaseDump, mysqlProvisioner, startDatabaseDump } from "./mysql";
import { ensureRepository, isMissingRepository, restic, resticStream, snapshotId, snapshotsTagged, tagOption, type ResticSnapshot } from "./restic";

// A backup's and a restore's work on the machine that hosts the account (docs: backups, nodes),
// in this machine's own restic repository (BACKUP_REPOSITORY, BACKUP_PASSWORD_FILE of the
// machine): the panel's own machine runs it in its process, another node's agent as a long job
// (lib/agent/operations.ts). The panel decides what a run is and keeps the records; this module
// reads and writes the home (as the account's own user), the databases of this machine's
// MariaDB and the repository.

/** The snapshots of this machine's repository with all of `tags`; none while it has not been made yet. */
export async function snapshotsWith(input: { tags: string[] }): Promise<ResticSnapshot[]> {
  return snapshotsTagged(input.tags.join(",")).catch((error) => {
    if (isMissingRepository(error)) return [];
    throw error;
  });
}

// ---- a run ----

/** One routine, view, trigger or event of a dumped database, as the records list it. */
export type DumpedObject = DatabaseObject & { database: string };

/**
 * A run's files and dumps, tagged `tags`: the home (`part:home`), then each of `databases`
 * (`db:<name>`). What the records need of this machine comes back: each database's routines,
 * views, triggers and events as dumped, and the MariaDB password hash of each of `database_users`.
 * A part that failed is forgotten with the rest of the run.
 */
export async function backupParts(input: { username: string; tags: string[]; databases: string[]; database_users: string[] }) {
  await ensureRepository();
  await backupHome(input.username, [...input.tags, "part:home"]);
  const server = mysqlProvisioner();
  if (input.databases.length && !server) throw new AppError("VALIDATION", "the account has databases but MYSQL_PROVISION_URL is not set");
  const objects: DumpedObject[] = [];
  for (const database of input.databases) objects.push(...(await backupDatabase(database, [...input.tags, `db:${database}`])));
  const passwordHashes: Record<string, string | null> = {};
  for (const user of input.database_users) passwordHashes[user] = (await server?.passwordHash(user)) ?? null;
  return { objects, password_hashes: passwordHashes };
}

/** The run's records (JSON), written last: from then on the run is complete. */
export async function backupRecords(input: { tags: string[]; records: string }): Promise<null> {
  await restic(["backup", "--stdin", "--stdin-filename=records.json", ...[...input.tags, "part:records"].map(tagOption)], Readable.from([input.records]));
  return null;
}

/**
 * mariadb-dump of one database (without --databases: no CREATE DATABASE or USE in it, so it
 * loads wherever a restore names) piped into restic; the dump's own failure fails the snapshot.
 * Its routines, views, triggers and events are listed first, for the records.
 */
async function backupDatabase(database: string, tags: string[]): Promise<DumpedObject[]> {
  const objects = (await mysqlProvisioner()!.databaseObjects(database)).map((object) => ({ database, ...object }));
  const dump = await startDatabaseDump(database);
  const stored = restic(["backup", "--stdin", `--stdin-filename=${database}.sql`, ...tags.map(tagOption)], dump.stdout);
  const [dumpResult, storeResult] = await Promise.allSettled([dump.done, stored]);
  if (dumpResult.status === "rejected") {
    // A snapshot of a half dump must not pass for a backup: it is forgotten at once.
    await forgetRun(tags);
    throw dumpResult.reason;
  }
  if (storeResult.status === "rejected") throw storeResult.reason;
  return objects;
}

/**
 * The home as its own Linux user reads it (tar, ./home-backup.ts) piped into restic as home.tar;
 * nothing when the account has no home. A read that failed forgets what restic stored of it.
 * Which failure is told: tar's own (restic then got a cut-off or empty stream), else restic's
 * (tar then ends on the closed pipe).
 */
async function backupHome(username: string, tags: string[]): Promise<void> {
  const archive = await startHomeArchive(homeOf(username), fileOwner(username));
  if (!archive) return;
  const stored = restic(["backup", "--stdin", `--stdin-filename=${HOME_ARCHIVE}`, ...tags.map(tagOption)], archive.stdout);
  const [readResult, storeResult] = await Promise.allSettled([archive.done, stored]);
  const readFailedItself = readResult.status === "rejected" && readResult.reason instanceof AppError;
  if (storeResult.status === "rejected" && !readFailedItself) throw storeResult.reason;
  if (readResult.status === "rejected") {
    await forgetRun(tags);
    throw readResult.reason;
  }
}

async function forgetRun(tags: string[]): Promise<void> {
  const run = tags.find((tag) => tag.startsWith("run:"));
  if (run) await restic(["forget", tagOption(run)]).catch(() => undefined);
}

/** Forgets (and prunes) these snapshots: retention, and runs left incomplete. */
export async function forgetSnapshots(input: { ids: string[] }): Promise<null> {
  if (input.ids.length) await restic(["forget", "--prune", "--", ...input.ids.map(snapshotId)]);
  return null;
}

/** What the snapshots with `tag` take in the repository (deduplicated, compressed); null when restic cannot say. */
export async function storedBytes(input: { tag: string }): Promise<number | null> {
  return restic(["stats", "--no-lock", "--json", "--mode=raw-data", tagOption(input.tag)]).then(
    (text) => (JSON.parse(text) as { total_size?: number }).total_size ?? 0,
    () => null,
  );
}

/** The records.json a `part:records` snapshot holds, as text. */
export async function readRecords(input: { snapshot_id: string }): Promise<string> {
  return restic(["dump", "--no-lock", "--", snapshotId(input.snapshot_id), "/records.json"]);
}

// ---- restores ----

/** How long a restore may take in a request (the API, the admin UI). */
export const RESTORE_DEADLINE_MS = 60 * 60_000;
/** How long one may take from the command line, which has no request to end. */
export const COMMAND_LINE_RESTORE_DEADLINE_MS = 24 * 60 * 60_000;

/** The error of a restore its signal stopped: its deadline passed, or (on the panel's machine) its request ended. */
export function restoreStopped(signal: AbortSignal): AppError {
  if ((signal.reason as Error | undefined)?.name === "TimeoutError") {
    return new AppError(
      "UNAVAILABLE",
      "The restore took longer than it may and was stopped (what it had written stays): restore a smaller part, or use the command line (panel backup restore)",
    );
  }
  return new AppError("UNAVAILABLE", "The restore was stopped: its request ended before it was done (what it had written stays)");
}

const throwIfStopped = (signal?: AbortSignal) => {
  if (signal?.aborted) throw restoreStopped(signal);
};

const megabytes = (bytes: number) => `${Math.ceil(bytes / 1048576)} MB`;

/**
 * `parts` (checked: relative, no `..`) of a home snapshot back into the account's home, into its
 * place or at `beside` (which must not exist), written by the account's Linux user. The
 * destination's folders are walked without following a link (one on the way → 422, nothing
 * written), and the backup's size must fit in the home file system's free space (422). A
 * folder comes back over what is there (the backup's files replace theirs, others stay); a file
 * replaces the one there once it is whole. False when the snapshot does not hold the path.
 */
export async function restoreHomePath(
  input: { username: string; snapshot: ResticSnapshot; parts: string[]; beside?: string[] | null },
  signal?: AbortSignal,
): Promise<boolean> {
  const { username, snapshot, parts } = input;
  const beside = input.beside ?? undefined;
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

/** The file a database's dump is in a `db:` snapshot (the name checked: a customer database's). */
const databaseFile = (database: string) => (databaseName(database), `${database}.sql`);

/** A dump's load, and the routines, views, triggers and events (`TYPE name`) its database has after it. */
export type DumpRestore = DumpLoad & { present: string[] };

/**
 * The dump of a `db:` snapshot streamed from restic into this machine's MariaDB database `into`
 * (its tables replaced), loaded as a user with rights on `into` only (./mysql.ts).
 */
export async function restoreDump(input: { snapshot: ResticSnapshot; database: string; into: string }, signal?: AbortSignal): Promise<DumpRestore> {
  const { stdout, done } = await resticStream(["dump", "--no-lock", "--", snapshotId(input.snapshot.id), `/${databaseFile(input.database)}`], signal);
  const [dumped, loaded] = await Promise.allSettled([done, loadDatabaseDump(input.into, stdout, signal)]);
  if (signal?.aborted) throw restoreStopped(signal);
  // restic's failure first: a load that "succeeded" on a cut-off dump is not a restore.
  if (dumped.status === "rejected") throw dumped.reason;
  if (loaded.status === "rejected") throw loaded.reason;
  const present = (await mysqlProvisioner()!.databaseObjects(input.into)).map((object) => `${object.type} ${object.name}`);
  return { ...loaded.value, present };
}
