import type { ChildProcess, StdioOptions } from "node:child_process";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import { PassThrough, pipeline, type Readable } from "node:stream";
import { AppError } from "@/lib/errors";
import { openDirectoryIn, openTrustedDirectory } from "./home-files";
import { childExit, exitReason, startAsUser, startChild, toolEnv } from "./system";

// The home in a backup (docs/backups.md "What a backup holds";
// docs/security.md "Backups read the home with the customer's rights"): read by the account's own
// Linux user, never by root. GNU tar runs as the account (runuser, CUSTOMER_ENV) and writes the
// home as one tar stream, which restic stores with `backup --stdin` as home.tar
// (lib/backups/service.ts), as it stores a database's dump. So the backup holds only what the
// customer can read: a folder swapped for a link to /etc or to a neighbour's home while it runs
// leads tar where the customer's own rights end (restic, walking the home as root by path, read
// whatever the link pointed at into the customer's backup). tar also never follows a link itself:
// it stores the link. The home is handed to tar open (fd 3), as du gets it (./home-files.ts).
//
// Backups made before this (restic's own tree of the home, by path) restore as they did:
// ./home-restore.ts reads both.

/** The name restic stores the home's tar under (its path in the snapshot: `/home.tar`). */
export const HOME_ARCHIVE = "home.tar";

/** Whether a home snapshot holds home.tar, rather than restic's tree of the home (backups made before). */
export const holdsHomeArchive = (snapshot: { paths: string[] }) => snapshot.paths.length === 1 && snapshot.paths[0] === `/${HOME_ARCHIVE}`;

/** How home.tar names a path of the home (its components, checked): `./public_html/index.php`. */
export const archiveMember = (parts: string[]) => [".", ...parts].join("/");

/** A backup may take hours, as restic's own may. */
const TIMEOUT_MS = 6 * 60 * 60_000;

const TAR_CREATE = [
  "--create",
  "--file=-",
  "--directory=/dev/fd/3",
  "--one-file-system",
  // The same order every night: an unchanged home gives the same bytes, which restic's chunker finds again.
  "--sort=name",
  "--format=gnu",
  "--numeric-owner",
  // Every hard link stored as the file it is (restic stores the bytes once): any path restores alone.
  "--hard-dereference",
  "--sparse",
  // What the account cannot read (a file it made unreadable, a log of root's) is left out, named on
  // standard error; a file changing or going while it is read is the ordinary life of a home.
  "--ignore-failed-read",
  "--warning=no-file-changed",
  "--warning=no-file-removed",
  "--warning=no-file-shrank",
  "--warning=no-file-ignored", // the sockets in run/
  // PHP's sessions and uploads under way: a visitor's session kept for months is a liability, and
  // brought back it is worth nothing.
  "--anchored",
  "--exclude=./tmp",
];

/** What a backup archives: the whole home. */
const WHOLE_HOME = ["--", "."];

/**
 * What GNU tar says of a file or folder that went between its listing and its reading (asked
 * for, for an incremental archive: --warning=file-removed after TAR_CREATE's no-file-removed),
 * or that was swapped for a link meanwhile (a folder it listed, then could not open as one: it
 * stores the link, while its listing names the folder and its files).
 */
const VANISHED = /No such file or directory|File removed before we read it|Not a directory|Too many levels of symbolic links/;

/** tar's exit statuses that are a backup (when it wrote one): 0, and 1 (a file changed while it was read: stored as read). */
const STORED = new Set([0, 1]);

/**
 * What a move's pass archives instead (./move-archive.ts): `members` of the home (`./public_html`…,
 * each there), with GNU tar's listing of what it read — the snapshot file of
 * `--listed-incremental` — open as `listing`: tar reads it (empty: everything is archived) and
 * writes it anew, and archives only the files changed since the listing it read was written,
 * with each folder's list of names. tar opens it as /dev/fd/4: a file of the account's user that
 * no path of theirs reaches.
 */
export interface IncrementalArchive {
  members: string[];
  listing: FileHandle;
}

/**
 * Starts tar writing the home `home` (HOME_ROOT/<username>) to its standard output, as `owner`
 * (the account's Linux user; null: the panel's own user, for homes without one, which no customer
 * process can write). `done` settles when tar has ended: its own failure (or runuser's) is logged
 * and rejects with an AppError in the panel's words; stopped by a signal (its reader gone), with
 * a plain Error. Either way what restic stored of it is no backup. null when there is no home.
 * A backup archives the whole home; a move's pass `incremental` (IncrementalArchive).
 */
export async function startHomeArchive(
  home: string,
  owner: string | null,
  incremental?: IncrementalArchive,
): Promise<{ stdout: Readable; done: Promise<void>; vanished: () => boolean } | null> {
  // HOME_ROOT is the administrator's; the home itself is opened like any directory in it, never through a link.
  const homes = await openTrustedDirectory(path.dirname(home));
  if (!homes) return null;
  const homeDir = await openDirectoryIn(homes, path.basename(home)).finally(() => homes.close());
  if (!homeDir) return null;
  const username = path.basename(home);
  const who = owner ?? "the panel's user";
  let tar: ChildProcess;
  try {
    const args = incremental ? [...TAR_CREATE, "--listed-incremental=/dev/fd/4", "--warning=file-removed", "--", ...incremental.members] : [...TAR_CREATE, ...WHOLE_HOME];
    const descriptors = incremental ? [homeDir.fd, incremental.listing.fd] : [homeDir.fd];
    const options = { stdio: ["ignore", "pipe", "pipe", ...descriptors] as StdioOptions, timeoutMs: TIMEOUT_MS };
    tar = owner ? startAsUser(owner, "tar", args, options) : startChild("tar", args, { ...options, env: toolEnv() });
  } catch (error) {
    await homeDir.close();
    throw error;
  }
  // What tar wrote: runuser's own failures (no such user, no tar) exit 1 too, having written nothing.
  let written = 0;
  tar.stdout!.on("data", (chunk: Buffer) => (written += chunk.length));
  // An incremental archive: whether something tar listed was gone when it came to read it (it says so on standard error).
  let vanished = false;
  let stderrTail = "";
  if (incremental) {
    tar.stderr!.on("data", (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString("latin1")).slice(-4096);
      if (VANISHED.test(stderrTail)) vanished = true;
    });
  }
  const stdout = new PassThrough();
  pipeline(tar.stdout!, stdout, () => undefined); // its reader gone (restic failed): tar ends on the closed pipe
  const done = childExit(tar)
    .then(
      (exit) => {
        if (exit.code !== null && STORED.has(exit.code) && written > 0) {
          if (exit.stderr) console.error(`[backups] the home of ${username} was read as ${who}, leaving out what it cannot read: ${exit.stderr.split("\n").slice(-4).join(" ")}`);
          return;
        }
        // Stopped (its reader gone, or the time-out): not a failure of its own.
        if (exit.signal) throw new Error(`tar reading the home of ${username} was stopped by ${exit.signal}`);
        console.error(`[backups] reading the home of ${username} as ${who} failed: ${exitReason(exit)}`);
        throw new AppError("VALIDATION", `reading the home of ${username} failed (the panel's log says why)`);
      },
      (error: Error) => {
        console.error(`[backups] tar could not run: ${error.message}`);
        throw new AppError("VALIDATION", "tar could not run (Debian package tar)");
      },
    )
    .finally(() => homeDir.close());
  return { stdout, done, vanished: () => vanished };
}
