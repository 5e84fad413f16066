import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { PassThrough, pipeline, Readable } from "node:stream";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { archiveMember, HOME_ARCHIVE, startHomeArchive } from "./home-backup";
import { LinkInHomeError, openDirectoryIn, openTrustedDirectory } from "./home-files";
import { fileOwner, homeOf } from "./home-layout";
import { linuxUserId } from "./passwd";
import { restic, resticStream, snapshotId, tagOption } from "./restic";
import { stopOnAbort } from "./stop-on-abort";
import { childExit, exitReason, startAsUser } from "./system";

// The home's part of a move's passes (docs/nodes.md "Moving accounts"), so that the final pass —
// the one the site is down for — costs what changed since the first, not what the home holds.
//
// Each pass archives the account's site folders as the account's own user (GNU tar, as a backup
// reads the home: ./home-backup.ts) with tar's `--listed-incremental` listing: the copy pass
// starts from an empty one (everything archived) and the source keeps the listing tar wrote —
// the "level 0", every folder's names with the time the copy began — in its DATA_DIR, root's
// alone, named by the copy's snapshot. The final pass gives tar a copy of that level 0: its archive
// holds only the files changed (or made) since the copy began, each folder's list of names, and
// the folders renamed since. The target writes each archive into the home as the account's
// user with `tar --extract --listed-incremental=/dev/null`, which also removes from each folder
// what the archive's list of it does not name: a file deleted on the source between the passes
// goes on the target too.
//
// The listing passes through the account's tar, which reads and rewrites it: it is a file of the
// account's user, made in root's DATA_DIR/moves and unlinked at once, handed to tar open (its fd
// 4, which tar opens as /dev/fd/4), so no path of the customer's reaches it. A process of the
// customer's could still write into it through that tar (/proc/<pid>/fd): what it gains is to
// choose what its own account's final archive holds, which it can already (tar runs as it). Root
// copies the listing's bytes and never reads them otherwise.
//
// A pass may run again from its start. The copy pass writes a new level 0 each time (the final
// pass names the copy the target holds). The final pass always starts from a fresh copy of the
// level 0, so a second one again holds everything changed since the copy. But an archive of
// changes is applied onto the copy it was taken against — the renames in it above all, which
// done twice undo themselves — so the target notes (DATA_DIR/moves/<move>.final) that it has
// begun to apply one, and before applying another it first writes the copy back whole.
//
// An archive of the copy pass is whole, and is written into its folders emptied first (by the
// account's user: find -delete, which follows no link). tar read the folders while the site
// served, so a folder swapped for a link as it read (a plugin's update, a customer's own race)
// can reach the archive as a link while the list of its parent names a folder there; applied
// over the folder an earlier pass left, tar then keeps that folder (its list says one is there)
// and cannot put the link in its place ("Cannot open: File exists"), and every write of that copy
// again — each retried switch — would fail the same way. Written into emptied folders, each copy
// ends as its archive has it, whatever the target held. Only the folders the archive holds are
// emptied (the source tags its snapshot `folder:<name>` for each): a site folder the source does
// not have is left as the target has it. The same tags name the members tar is given, so it is
// not asked for a folder the archive lacks. A snapshot stored without those tags (by a source from
// before) is written as before: over what is there, every folder the job names asked for.
//
// Some archives of changes cannot be applied onto the copy at all: a folder renamed onto the
// name of a link the copy had (`rm current && mv release current`) is a rename tar cannot make
// over that link ("Cannot rename …: Not a directory"), and written back and applied again at the
// next attempt it fails the same way, until the move is cancelled. So when the target fails to
// write the home in a final pass of changes, it says so in the move's repository (a snapshot of
// one word tagged `refused:<copy>`), and the source takes every later final pass against that
// copy whole (tagged `archive:whole`, as it does when it kept no level 0); the target writes a
// whole final as it writes a copy — into its folders emptied — without writing the copy back
// first. A final pass that failed on the target makes the next ones whole, and only that.

const MB = 1024 * 1024;
/** A level 0 larger than this is not kept (a million files list in ~60 MB): the final pass then archives the site folders whole. */
const LONGEST_LISTING = 512 * MB;
/** What a move leaves in DATA_DIR/moves when nobody tells the node it ended (a target's note, a source away at a cancel) goes after this long. */
const KEPT_DAYS = 30;

/** Where a node keeps its moves' files: root's, 0700 (made by the first pass). */
export const moveFilesDir = () => path.join(env().dataDir, "moves");

/** The move's name in that folder: its repository's, hashed (a repository string may hold anything). */
const moveKey = (repository: string) => createHash("sha256").update(repository).digest("hex").slice(0, 32);

/** The source's level 0 of the copy pass whose home snapshot is `copy`. */
const levelZeroFile = (repository: string, copy: string) => path.join(moveFilesDir(), `${moveKey(repository)}.${snapshotId(copy)}.listing`);

/** The target's note that it has begun to apply a final archive (onto the copy). */
const finalNote = (repository: string) => path.join(moveFilesDir(), `${moveKey(repository)}.final`);

/** Whether `file` exists (a path of root's own folder, never a customer's). */
const exists = (file: string) => fs.stat(file).then(
  () => true,
  () => false,
);

/** The tag of a pass's home snapshot for each site folder its archive holds: `folder:public_html`. */
const FOLDER_TAG = "folder:";
/** The tag of a pass's home snapshot whose archive is whole (taken without a level 0). */
const WHOLE_TAG = "archive:whole";
/** The tags of the target's note in the move's repository that it could not write a final pass of changes onto the copy `copy`. */
const refusedTags = (copy: string) => ["part:apply-failed", `refused:${snapshotId(copy)}`];
/** The tag of that note, to look for it (snapshotsTagged). */
export const refusedTag = (copy: string) => refusedTags(copy)[1];

/** Whether a home snapshot of a move's final pass holds its folders whole rather than what changed. */
export const isWholeArchive = (snapshot: { tags?: string[] }) => snapshot.tags?.includes(WHOLE_TAG) ?? false;

/**
 * The site folders a home snapshot of a move's pass holds, as its tags name them (checked as
 * `members` checks them); null when it has none of those tags (stored by a source from before).
 */
export function foldersInArchive(snapshot: { tags?: string[] }): string[] | null {
  const folders = (snapshot.tags ?? []).filter((tag) => tag.startsWith(FOLDER_TAG)).map((tag) => tag.slice(FOLDER_TAG.length));
  if (!folders.length) return null;
  members(folders);
  return folders;
}

/** `folders` (site folders, one name each) as tar names them in the archive: `./public_html`. */
function members(folders: string[]): string[] {
  for (const folder of folders) {
    if (!/^[\w.-]+$/.test(folder) || folder === "." || folder === "..") throw new AppError("VALIDATION", `${JSON.stringify(folder.slice(0, 80))} is not a site folder of a home`);
  }
  return [...new Set(folders)].map((folder) => archiveMember([folder]));
}

/**
 * The site folders that are folders in the home now (never through a link). tar is given only
 * these: a member missing from its command line with --ignore-failed-read makes GNU tar 1.34
 * forget the renames it found, and a renamed folder would then reach the target empty.
 */
async function foldersInHome(home: string, folders: string[]): Promise<string[]> {
  const homes = await openTrustedDirectory(path.dirname(home));
  if (!homes) return [];
  const homeDir = await openDirectoryIn(homes, path.basename(home)).finally(() => homes.close());
  if (!homeDir) return [];
  try {
    const present: string[] = [];
    for (const folder of folders) {
      const dir = await openDirectoryIn(homeDir, folder).catch((error) => {
        if (error instanceof LinkInHomeError) return null;
        throw error;
      });
      if (!dir) continue;
      await dir.close();
      present.push(folder);
    }
    return present;
  } finally {
    await homeDir.close();
  }
}

/**
 * A listing for tar: a file no path names (made in root's folder, unlinked at once) holding
 * `content`, given to `owner` (the account's user, who runs tar) when there is one.
 */
async function workingListing(content: Buffer | null, owner: string | null): Promise<FileHandle> {
  const dir = moveFilesDir();
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${randomUUID()}.working`);
  const handle = await fs.open(file, "wx+", 0o600);
  try {
    await fs.unlink(file);
    if (content) await handle.writeFile(content);
    if (owner) {
      const uid = await linuxUserId(owner);
      if (uid === null) throw new AppError("VALIDATION", `the account's Linux user ${owner} does not exist on this node`);
      await handle.chown(uid, -1);
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** What tar left in the listing `handle`; null when it is larger than LONGEST_LISTING (not kept). */
async function readListing(handle: FileHandle): Promise<Buffer | null> {
  const { size } = await handle.stat();
  if (size > LONGEST_LISTING) return null;
  const buffer = Buffer.alloc(size);
  const { bytesRead } = await handle.read(buffer, 0, size, 0);
  return buffer.subarray(0, bytesRead);
}

/**
 * The source's side of a pass for the home: the site folders `folders` of `username`'s home,
 * read by its user, stored in the move's repository (the one in scope: withRepository) as
 * home.tar with `tags` (and `part:home`). The final pass (`copy`: the home snapshot of the copy
 * pass the target holds) archives only what changed since that copy began (`changes`), when this
 * node kept its level 0; else, as the copy pass, everything. false when there is nothing to
 * archive (no home, no site folder in it). A read that failed forgets what restic stored of it.
 *
 * Resolves with the listing tar wrote — for the copy pass, its level 0 (for keepLevelZero) —
 * or null when it is not to be kept: too large, or something tar listed had gone when it came to
 * read it. tar lists every folder first and reads the files after, so a folder renamed meanwhile
 * (a plugin's update, while the site serves) reaches the target without its files, and an
 * archive of changes would name them as already there. The final pass is then taken whole.
 */
export async function storeMoveHome(input: { repository: string; username: string; folders: string[]; tags: string[]; copy: string | null }): Promise<{ listing: Buffer | null; changes: boolean } | false> {
  const home = homeOf(input.username);
  const present = await foldersInHome(home, input.folders);
  if (!present.length) return false;
  const owner = fileOwner(input.username);
  const levelZero = input.copy ? await fs.readFile(levelZeroFile(input.repository, input.copy)).catch(() => null) : null;
  const listing = await workingListing(levelZero, owner);
  try {
    const archive = await startHomeArchive(home, owner, { members: members(present), listing });
    if (!archive) return false;
    const tags = [...input.tags, "part:home", ...present.map((folder) => `${FOLDER_TAG}${folder}`), ...(levelZero ? [] : [WHOLE_TAG])];
    const stored = restic(["backup", "--stdin", `--stdin-filename=${HOME_ARCHIVE}`, ...tags.map(tagOption)], archive.stdout);
    const [readResult, storeResult] = await Promise.allSettled([archive.done, stored]);
    const readFailedItself = readResult.status === "rejected" && readResult.reason instanceof AppError;
    if (storeResult.status === "rejected" && !readFailedItself) throw storeResult.reason;
    if (readResult.status === "rejected") {
      const run = tags.find((tag) => tag.startsWith("run:"));
      if (run) await restic(["forget", tagOption(run)]).catch(() => undefined);
      throw readResult.reason;
    }
    return { listing: archive.vanished() ? null : await readListing(listing), changes: levelZero !== null };
  } finally {
    await listing.close();
  }
}

/**
 * Keeps `listing` as the level 0 of the copy pass whose home snapshot is `copy`, written whole
 * before it is named (null: none is kept, the final pass is taken whole); the level 0 of the
 * move's earlier copy passes goes.
 */
export async function keepLevelZero(repository: string, copy: string, listing: Buffer | null): Promise<void> {
  const file = levelZeroFile(repository, copy);
  if (listing) {
    const partial = `${file}.${randomUUID()}.partial`;
    await fs.writeFile(partial, listing, { mode: 0o600, flag: "wx" });
    await fs.rename(partial, file);
  }
  const key = moveKey(repository);
  for (const name of await fs.readdir(moveFilesDir())) {
    if (name.startsWith(`${key}.`) && name.endsWith(".listing") && (!listing || path.join(moveFilesDir(), name) !== file)) await fs.rm(path.join(moveFilesDir(), name), { force: true });
  }
}

/** Everything this node keeps of the move (its level 0, a target's note): the move has ended. */
export async function forgetMoveFiles(repository: string): Promise<void> {
  const key = moveKey(repository);
  const names = await fs.readdir(moveFilesDir()).catch(() => [] as string[]);
  for (const name of names) if (name.startsWith(`${key}.`)) await fs.rm(path.join(moveFilesDir(), name), { force: true });
}

/** The level 0s and notes of moves that ended without this node being told (KEPT_DAYS untouched). */
export async function pruneOldMoveFiles(): Promise<void> {
  const dir = moveFilesDir();
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const before = Date.now() - KEPT_DAYS * 24 * 60 * 60_000;
  for (const name of names.filter((candidate) => /\.(listing|final|partial)$/.test(candidate))) {
    const stat = await fs.stat(path.join(dir, name)).catch(() => null);
    if (stat && stat.mtimeMs < before) await fs.rm(path.join(dir, name), { force: true });
  }
}

/**
 * Whether the target has begun to apply a final archive of the move; from this call on it has
 * (the note is made, or touched: what it is kept for is counted from the last pass).
 */
export async function beginFinalArchive(repository: string): Promise<boolean> {
  const note = finalNote(repository);
  const begun = await exists(note);
  await fs.mkdir(moveFilesDir(), { recursive: true, mode: 0o700 });
  const now = new Date();
  await fs.writeFile(note, "", { mode: 0o600 });
  await fs.utimes(note, now, now);
  return begun;
}

/**
 * The target's note, in the move's repository (the one in scope), that it could not write a final
 * pass of changes onto the copy `copy` (its home snapshot): the source takes the later final passes
 * against that copy whole (takeMoveSnapshot, ./move-runs.ts).
 */
export async function refuseChanges(copy: string): Promise<void> {
  await restic(["backup", "--stdin", "--stdin-filename=apply-failed", tagOption("pass:final"), ...refusedTags(copy).map(tagOption)], Readable.from([Buffer.from("refused\n")])); // restic stores no empty snapshot
}

/**
 * restic's dump of home.tar of the snapshot `id` (checked: 64 hex digits), stopped when `signal`
 * aborts. Read at once into a stream of its own that holds what comes (restic waits when it is
 * full) until it is piped on: Node discards what an exited child wrote to an output nobody reads.
 */
export async function dumpHomeArchive(id: string, signal?: AbortSignal): Promise<{ stdout: Readable; done: Promise<void> }> {
  const dump = await resticStream(["dump", "--no-lock", "--", snapshotId(id), `/${HOME_ARCHIVE}`], signal);
  const held = new PassThrough();
  pipeline(dump.stdout, held, () => undefined); // held destroyed (its reader gone): restic stops on the closed pipe
  return { stdout: held, done: dump.done };
}

/** tar's line for a member the archive does not hold: a site folder the source did not have. */
const NOT_IN_ARCHIVE = /^tar: (\.\/[\w.-]+): Not found in archive$/;
const FAILED_BEFORE = "tar: Exiting with failure status due to previous errors";
/**
 * What the account runs to write an archive into its home (fd 3): fixed text, its parameters the
 * folders to empty first, `--`, and the members. In the home itself (cd), not tar's --directory:
 * tar applies a folder's renames there through temporary names made relative to the working
 * directory, not to --directory's. A folder is emptied only when it is one (not a link): find
 * follows no link, from the folder down, and removes what is in it, the folder itself kept.
 */
const EXTRACT_SCRIPT = `cd /dev/fd/3 || exit 2
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
  if [ -d "$1" ] && [ ! -h "$1" ]; then find "$1" -mindepth 1 -delete || exit 3; fi
  shift
done
shift
exec tar --extract --file=- --listed-incremental=/dev/null --preserve-permissions --no-same-owner --no-wildcards --no-unquote -- "$@"
`;

/** A pass may take hours, as a backup may. */
const EXTRACT_TIMEOUT_MS = 6 * 60 * 60_000;
/** tar's standard error kept for the check: more is a failure of its own. */
const KEPT_STDERR = 64 * 1024;

/**
 * The target's side of a pass for the home: `archive` (restic's dump of a move's home.tar)
 * written into the site folders `folders` of `username`'s home by its own user — tar run as the
 * account in the home handed to it open (fd 3), `--listed-incremental=/dev/null` so that each
 * folder in the archive ends as the archive lists it (what it does not name is removed). Only
 * `folders` are taken from the archive (the customer's tar wrote it); one the archive does not
 * hold is left as it is: `held`, the folders it holds (foldersInArchive; null: not known), limits
 * what tar is asked for. A `whole` archive (the copy's) is written into those folders emptied
 * first by the same user, so that nothing the target had stands in the way of what it holds (only
 * when `held` is known). Root writes nothing in the home.
 */
export async function extractMoveArchive(input: {
  username: string;
  folders: string[];
  held?: string[] | null;
  whole?: boolean;
  archive: { stdout: Readable; done: Promise<void> };
  signal?: AbortSignal;
}): Promise<void> {
  const { username, archive, signal, held } = input;
  const wanted = members(held ? input.folders.filter((folder) => held.includes(folder)) : input.folders);
  const emptied = input.whole && held ? wanted : [];
  if (!wanted.length) {
    // Nothing of the archive is taken (tar given no member would take all of it).
    archive.stdout.destroy();
    await archive.done.catch(() => undefined);
    return;
  }
  const home = homeOf(username);
  const homes = await openTrustedDirectory(path.dirname(home));
  const homeDir = homes && (await openDirectoryIn(homes, path.basename(home)).finally(() => homes.close()));
  if (!homeDir || !env().systemUsers) {
    await homeDir?.close();
    archive.stdout.destroy();
    await archive.done.catch(() => undefined);
    throw new AppError("VALIDATION", homeDir ? "Moving files needs SYSTEM_USERS=1 (the files are written by the account's user)" : `the home of ${username} is not on this node`);
  }
  let exit;
  let stderrBytes = 0;
  try {
    const tar = startAsUser(username, "sh", ["-c", EXTRACT_SCRIPT, "panel-move-extract", ...emptied, "--", ...wanted], { stdio: ["pipe", "ignore", "pipe", homeDir.fd], timeoutMs: EXTRACT_TIMEOUT_MS });
    stopOnAbort(tar, signal);
    tar.stdin!.on("error", () => undefined); // tar gone: its exit says why
    tar.stderr!.on("data", (chunk: Buffer) => (stderrBytes += chunk.length));
    archive.stdout.pipe(tar.stdin!);
    try {
      exit = await childExit(tar, KEPT_STDERR);
    } finally {
      archive.stdout.destroy(); // tar could not run, or is gone: restic stops on the closed pipe
    }
  } finally {
    await homeDir.close();
  }
  const dumped = await archive.done.then(
    () => null,
    (error: Error) => error,
  );
  // restic's failure first: what tar made of a cut-off stream says nothing.
  if (dumped) throw dumped;
  if (exit.code === 0) return;
  const onlyMissingFolders =
    exit.code === 2 &&
    stderrBytes < KEPT_STDERR &&
    exit.stderr.split("\n").every((line) => line === FAILED_BEFORE || wanted.includes(NOT_IN_ARCHIVE.exec(line)?.[1] ?? ""));
  if (onlyMissingFolders) return;
  console.error(`[moves] writing the site folders of ${username} as ${username} failed: ${exitReason(exit)}`);
  throw new AppError("VALIDATION", `the site folders of ${username} could not be written on this node by its user (its disk quota? the panel's log says why)`);
}
