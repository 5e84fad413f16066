import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import type { Writable } from "node:stream";
import { resticStream, type SnapshotEntry } from "./restic";
import { stopOnAbort } from "./stop-on-abort";
import { childExit, exitReason, startAsUser } from "./system";

// A file or folder of a home snapshot back into the home, written by the account's own Linux
// user (README "Backups", "Security"). restic's own output (`restic dump`: a file's bytes, a
// folder as a tar) is streamed into a shell run as the account (runuser, CUSTOMER_ENV), which
// writes it with `tar -x --no-same-owner` or through a temporary file and a rename. Root never
// writes, chowns, chmods or removes anything in the home, and nothing is staged anywhere: the
// restore can write only what the customer could (quota included), and a link the customer
// swaps in midway leads only where the customer could already write.
//
// The destination's parent is the directory the service walked without following links, handed
// to the shell as its fd 4 (`cd /dev/fd/4`), so the shell starts exactly there; fd 3 carries the
// panel's word that restic ended well, without which a file never takes the old one's place.

/** The shell the account runs: fixed text; every value reaches it as a positional parameter, never as code. */
const RESTORE_SCRIPT = `set -eu
kind=$1 name=$2 mode=$3 extra=$4
cd /dev/fd/4
case $kind in
folder)
  # Whatever is in the way and is not a folder (a file, a link) makes room; a folder there takes the backup's files over its own.
  if [ -L "$name" ] || { [ -e "$name" ] && [ ! -d "$name" ]; }; then rm -f -- "$name"; fi
  [ -d "$name" ] || mkdir -m "$mode" -- "$name"
  exec tar -x -f - -p --no-same-owner --strip-components="$extra" -C "$name"
  ;;
file)
  if [ -d "$name" ] && [ ! -L "$name" ]; then exit 3; fi
  temporary=$(mktemp -p . .restore.XXXXXXXX)
  trap 'rm -f -- "$temporary"' EXIT
  trap 'exit 143' TERM INT
  cat > "$temporary"
  IFS= read -r outcome <&3 || exit 4
  [ "$outcome" = complete ] || exit 4
  chmod "$mode" "$temporary"
  touch -m -d "$extra" -- "$temporary"
  mv -f -T -- "$temporary" "$name"
  trap - EXIT
  ;;
remove)
  rm -rf -- "$name"
  ;;
esac
`;

/** Exit status of RESTORE_SCRIPT when a folder stands where a file is to be restored. */
const FOLDER_IN_THE_WAY = 3;

/** How a restore into a home ended, as the service words it. */
export type HomeRestoreOutcome = "restored" | "a folder is in the way" | "failed";

/** The shell's fd 3: the panel's word that restic ended well. */
const wordTo = (shell: ChildProcess) => shell.stdio[3] as Writable;

/** The shell, as `username`, in the directory open as `parent` (fd 4), with fd 3 for the panel's word; stopped when `signal` aborts. */
function startRestoreShell(username: string, parent: FileHandle, args: string[], signal?: AbortSignal) {
  const shell = startAsUser(username, "sh", ["-c", RESTORE_SCRIPT, "panel-restore", ...args], { stdio: ["pipe", "ignore", "pipe", "pipe", parent.fd] });
  stopOnAbort(shell, signal);
  shell.stdin!.on("error", () => undefined); // the shell gone: its exit says why
  wordTo(shell).on("error", () => undefined);
  return shell;
}

/**
 * Writes `entry` — the snapshot's `source` (an absolute path in the snapshot) — as `name` in the
 * directory open as `parent`, as `username`. A folder: restic's tar, its leading components (the
 * source's own path) stripped, extracted into `name` (made with the backup's mode when missing;
 * files there are replaced by the backup's, others stay). A file: written beside, then renamed
 * over `name` once restic has ended well. Logs the programs' own words on failure.
 */
export async function restoreIntoDirectory(options: {
  username: string;
  snapshotId: string;
  source: string;
  entry: SnapshotEntry;
  parent: FileHandle;
  name: string;
  signal?: AbortSignal;
}): Promise<HomeRestoreOutcome> {
  const { username, snapshotId, source, entry, parent, name, signal } = options;
  if (entry.kind === "other") throw new Error(`not a file or a folder: ${source}`);
  const mode = entry.mode.toString(8);
  // touch -d reads restic's RFC 3339 time; anything else (none recorded) leaves the time of the write.
  const mtime = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)$/.test(entry.mtime) ? entry.mtime : "now";
  const extra = entry.kind === "folder" ? String(source.split("/").filter(Boolean).length) : mtime;
  const dump = await resticStream(["dump", "--no-lock", snapshotId, source], signal);
  const shell = startRestoreShell(username, parent, [entry.kind, name, mode, extra], signal);
  dump.stdout.pipe(shell.stdin!);
  // The word a file waits for before it replaces the old one: given only once restic ended well.
  const dumped = dump.done.then(
    () => null,
    (error: Error) => error,
  );
  void dumped.then((failed) => wordTo(shell).end(failed ? "" : "complete\n"));
  let exit;
  try {
    exit = await childExit(shell);
  } finally {
    dump.stdout.destroy(); // the shell could not run, or is gone: restic stops on the closed pipe
  }
  const dumpFailure = await dumped;
  if (exit.code === FOLDER_IN_THE_WAY) return "a folder is in the way";
  if (exit.code !== 0) {
    // The shell's own failure (quota, a file it may not replace), or restic's cut short its input.
    console.error(`[backups] restoring ${source} as ${username} failed: ${exitReason(exit)}`);
    return "failed";
  }
  if (dumpFailure) throw dumpFailure;
  return "restored";
}

/** Removes `name` (and all it holds) from the directory open as `parent`, as `username`: what a failed restore made there. */
export async function removeAsUser(username: string, parent: FileHandle, name: string): Promise<void> {
  const shell = startRestoreShell(username, parent, ["remove", name, "", ""]);
  shell.stdin!.end();
  wordTo(shell).end();
  const exit = await childExit(shell);
  if (exit.code !== 0) console.error(`[backups] removing the partial restore ${name} as ${username} failed: ${exitReason(exit)}`);
}

/** Bytes free for ordinary users on the file system of the directory open as `dir`. */
export async function freeBytesOf(dir: FileHandle): Promise<number> {
  const { bavail, bsize } = await fs.statfs(`/proc/self/fd/${dir.fd}`);
  return bavail * bsize;
}
