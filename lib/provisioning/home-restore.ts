import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { AppError } from "@/lib/errors";
import { archiveMember, HOME_ARCHIVE, holdsHomeArchive } from "./home-backup";
import { type ResticSnapshot, resticStream, type SnapshotEntry, snapshotEntry, snapshotId } from "./restic";
import { stopOnAbort } from "./stop-on-abort";
import { childExit, exitReason, operand, startAsUser } from "./system";

// A file or folder of a home snapshot back into the home, written by the account's own Linux
// user (docs/backups.md "Restore";
// docs/security.md "Restores and dumps run with the customer's rights"). restic's own output is
// streamed into a shell run as the account (runuser, CUSTOMER_ENV), which writes it with `tar -x
// --no-same-owner`, or a file through a temporary one and a rename. Root never writes, chowns,
// chmods or removes anything in the home, and nothing is staged anywhere: the restore can write
// only what the customer could (quota included), and a link the customer swaps in midway leads only
// where the customer could already write.
//
// A home snapshot is one of two kinds. Since the home is read as its user (./home-backup.ts) it
// holds home.tar, the home as tar wrote it: what is restored is one member of it (and what lies
// below), which the account's tar takes from `restic dump` of the whole stream (restic cannot
// seek in it) — listed first, by the same kind of process, for its kind and size. Before, restic
// kept its own tree of the home: `restic ls` says what a path is, `restic dump` of the path gives
// a file's bytes or a folder as a tar. Either way the stream is the customer's own writing — tar
// ran as them, and may have been made to write anything — so only a process of theirs parses
// it, and what the panel reads of its listing decides nothing but how to ask for it.
//
// The destination's parent is the directory the service walked without following links, handed
// to the shell as its fd 4 (`cd /dev/fd/4`), so the shell starts exactly there; fd 3 carries the
// panel's word that restic ended well, without which a file never takes the old one's place.

/** The shell the account runs: fixed text; every value reaches it as a positional parameter, never as code. */
const RESTORE_SCRIPT = `set -eu
kind=$1 name=$2 mode=$3 extra=$4 member=\${5-}
cd /dev/fd/4
# From home.tar: the member alone, its leading components ($extra) stripped; the rest of the
# stream is read and dropped, so that restic's dump ends well.
take() {
  tar -x -f - -p --no-same-owner --no-wildcards --no-unquote --strip-components="$extra" "$@" -- "$member"
  cat > /dev/null
}
case $kind in
folder)
  # Whatever is in the way and is not a folder (a file, a link) makes room; a folder there takes the backup's files over its own.
  if [ -L "$name" ] || { [ -e "$name" ] && [ ! -d "$name" ]; }; then rm -f -- "$name"; fi
  [ -d "$name" ] || mkdir -m "$mode" -- "$name"
  if [ -n "$member" ]; then take -C "$name"; exit 0; fi
  exec tar -x -f - -p --no-same-owner --strip-components="$extra" -C "$name"
  ;;
file)
  if [ -d "$name" ] && [ ! -L "$name" ]; then exit 3; fi
  trap 'exit 143' TERM INT
  if [ -n "$member" ]; then
    # tar writes the file with its mode and time, alone in a folder of its own beside its place.
    folder=$(mktemp -d -p . .restore.XXXXXXXX)
    trap 'rm -rf -- "$folder"' EXIT
    take -C "$folder"
    temporary=$folder/\${member##*/}
    if [ -L "$temporary" ] || [ ! -f "$temporary" ]; then exit 5; fi
  else
    temporary=$(mktemp -p . .restore.XXXXXXXX)
    trap 'rm -f -- "$temporary"' EXIT
    cat > "$temporary"
    chmod "$mode" "$temporary"
    touch -m -d "$extra" -- "$temporary"
  fi
  IFS= read -r outcome <&3 || exit 4
  [ "$outcome" = complete ] || exit 4
  mv -f -T -- "$temporary" "$name"
  # Kept: the temporary file, renamed. From home.tar its folder, empty now, goes on exit.
  [ -n "$member" ] || trap - EXIT
  ;;
remove)
  rm -rf -- "$name"
  ;;
esac
`;

/** How tar lists home.tar for parseListedLine: every name C-quoted (so no name passes for another line or field), member names taken as they are (no wildcards, no unquoting). */
export const LIST_OPTIONS = ["-t", "-v", "--numeric-owner", "--quoting-style=c", "--no-wildcards", "--no-unquote"] as const;

/** The shell the account runs to list what home.tar holds at a member: fixed text, the member its parameter. */
const LIST_SCRIPT = `tar ${LIST_OPTIONS.join(" ")} -f - -- "$1"
listed=$?
cat > /dev/null
exit $listed
`;

/** Exit status of RESTORE_SCRIPT when a folder stands where a file is to be restored. */
const FOLDER_IN_THE_WAY = 3;

/** How a restore into a home ended, as the service words it. */
export type HomeRestoreOutcome = "restored" | "a folder is in the way" | "failed";

/**
 * Where a home snapshot keeps a path: a member of its home.tar, or (a backup made before the home
 * was read as its user) a path of restic's tree.
 */
export type HomeSnapshotPath = { snapshotId: string } & ({ format: "archive"; member: string } | { format: "tree"; path: string });

/** Where `snapshot` (a home's) keeps the path of the home whose components are `parts` (checked: no `..`). */
export function homeSnapshotPath(snapshot: ResticSnapshot, home: string, parts: string[]): HomeSnapshotPath {
  if (holdsHomeArchive(snapshot)) return { snapshotId: snapshot.id, format: "archive", member: archiveMember(parts) };
  // restic's tree holds the home under the path it had then, which a renamed HOME_ROOT does not change.
  return { snapshotId: snapshot.id, format: "tree", path: path.posix.join(snapshot.paths[0] ?? home, ...parts) };
}

/** restic's dump of what holds `source`: the whole of home.tar, or the path of the tree. */
const dumpOf = (source: HomeSnapshotPath, signal?: AbortSignal) =>
  resticStream(["dump", "--no-lock", "--", snapshotId(source.snapshotId), source.format === "archive" ? `/${HOME_ARCHIVE}` : operand("a path in the snapshot", source.path)], signal);

/**
 * What the snapshot holds at `source`, and the bytes of the files it is or holds; null when it
 * holds nothing there. home.tar is listed by the account's own tar (`username`); restic's tree by
 * `restic ls`.
 */
export async function homeSnapshotEntry(username: string, source: HomeSnapshotPath, signal?: AbortSignal): Promise<SnapshotEntry | null> {
  if (source.format === "tree") return snapshotEntry(source.snapshotId, source.path, signal);
  const dump = await dumpOf(source, signal);
  const lister = startAsUser(username, "sh", ["-c", LIST_SCRIPT, "panel-list", source.member], { stdio: ["pipe", "pipe", "pipe"] });
  stopOnAbort(lister, signal);
  lister.stdin!.on("error", () => undefined); // the lister gone: its exit says why
  dump.stdout.pipe(lister.stdin!);
  const exited = childExit(lister);
  const member = latin1(source.member);
  let entry: SnapshotEntry | null = null;
  let bytes = 0;
  try {
    for await (const line of linesOf(lister.stdout!, LONGEST_LISTED_LINE)) {
      const listed = parseListedLine(line);
      if (!listed) continue;
      // tar lists the member and what lies below it; a name listed twice is extracted twice, the last one staying.
      if (listed.name === member) entry = { kind: listed.kind, mode: listed.mode, mtime: "", bytes: 0 };
      if ((listed.name === member || listed.name.startsWith(`${member}/`)) && listed.kind === "file") bytes += listed.size;
    }
  } finally {
    dump.stdout.destroy(); // the lister gone: restic stops on the closed pipe
  }
  const [exit, dumped] = await Promise.all([exited, dump.done.then(() => null, (error: Error) => error)]);
  // restic's failure first: a listing of a cut-off stream says nothing.
  if (dumped) throw dumped;
  if (exit.code === 0) return entry && { ...entry, bytes };
  if (exit.code === 2 && entry === null && /Not found in archive/.test(exit.stderr)) return null;
  console.error(`[backups] listing ${source.member} of the backup of ${username}'s home as ${username} failed: ${exitReason(exit)}`);
  throw new AppError("VALIDATION", "The backup's copy of the home could not be read (the panel's log says why)");
}

/** A line of tar's listing longer than this is no path of a home (PATH_MAX, C-quoted): skipped, never held whole. */
const LONGEST_LISTED_LINE = 64 * 1024;

/** The lines of `stream`; one longer than `longest` characters is skipped as it comes. */
async function* linesOf(stream: Readable, longest: number): AsyncGenerator<string> {
  let line = "";
  let skipping = false;
  for await (const chunk of stream) {
    const pieces = (chunk as Buffer).toString("latin1").split("\n");
    for (const [index, piece] of pieces.entries()) {
      const last = index === pieces.length - 1;
      if (!skipping) line += piece;
      if (line.length > longest) {
        skipping = true;
        line = "";
      }
      if (last) break;
      if (!skipping) yield line;
      line = "";
      skipping = false;
    }
  }
  if (line && !skipping) yield line;
}

/** A string as its UTF-8 bytes, one character per byte: how linesOf and unquoteC give names. */
const latin1 = (text: string) => Buffer.from(text, "utf8").toString("latin1");

/** One entry of `tar -t -v --numeric-owner --quoting-style=c`: its kind, permission bits, size and name (bytes as latin1 characters). */
interface ListedEntry {
  kind: SnapshotEntry["kind"];
  mode: number;
  size: number;
  name: string;
}

/**
 * `-rw-r--r-- 1000/1000   1234 2026-11-25 02:00 "./public_html/a \"b\".php"` (a link adds
 * ` -> "…"`, a hard link ` link to "…"`); null for anything else. A folder's name ends in `/`,
 * dropped here.
 */
export function parseListedLine(line: string): ListedEntry | null {
  const quote = line.indexOf('"');
  if (quote < 0) return null;
  const [permissions, , size] = line.slice(0, quote).trim().split(/\s+/);
  if (!/^.[-rwxsStT]{9}$/.test(permissions ?? "")) return null;
  const name = unquoteC(line.slice(quote));
  if (!name) return null;
  const kind = permissions[0] === "-" ? "file" : permissions[0] === "d" ? "folder" : "other";
  let mode = 0;
  for (const [index, letter] of [...permissions.slice(1)].entries()) if (!"-ST".includes(letter)) mode |= 0o400 >> index;
  return { kind, mode, size: /^\d+$/.test(size ?? "") ? Number(size) : 0, name: name.text.replace(/\/+$/, "") };
}

const C_ESCAPES: Record<string, string> = { a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" };

/** The C-quoted string at the start of `quoted` (`"a\\n\\303\\251"`), as bytes in latin1 characters; null when it is not one. */
function unquoteC(quoted: string): { text: string } | null {
  let text = "";
  for (let index = 1; index < quoted.length; index++) {
    const character = quoted[index];
    if (character === '"') return { text };
    if (character !== "\\") {
      text += character;
      continue;
    }
    const octal = /^[0-7]{1,3}/.exec(quoted.slice(index + 1))?.[0];
    if (octal) {
      text += String.fromCharCode(parseInt(octal, 8) & 0xff);
      index += octal.length;
    } else {
      const escaped = quoted[++index];
      if (escaped === undefined) return null;
      text += C_ESCAPES[escaped] ?? escaped;
    }
  }
  return null;
}

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
 * Writes `entry` — what the snapshot holds at `source` — as `name` in the directory open as
 * `parent`, as `username`. A folder: its files extracted into `name` (made with the backup's
 * mode when missing; files there are replaced by the backup's, others stay). A file: written
 * beside, then renamed over `name` once restic has ended well. Logs the programs' own words on
 * failure.
 */
export async function restoreIntoDirectory(options: {
  username: string;
  source: HomeSnapshotPath;
  entry: SnapshotEntry;
  parent: FileHandle;
  name: string;
  signal?: AbortSignal;
}): Promise<HomeRestoreOutcome> {
  const { username, source, entry, parent, name, signal } = options;
  const shown = source.format === "archive" ? source.member : source.path;
  if (entry.kind === "other") throw new Error(`not a file or a folder: ${shown}`);
  const mode = entry.mode.toString(8);
  let extra: string;
  let member = "";
  if (source.format === "archive") {
    // The member's own leading components go (a file keeps its name, in the folder tar writes it to).
    const components = source.member.split("/").length;
    extra = String(entry.kind === "folder" ? components : components - 1);
    member = source.member;
  } else if (entry.kind === "folder") {
    extra = String(source.path.split("/").filter(Boolean).length);
  } else {
    // touch -d reads restic's RFC 3339 time; anything else (none recorded) leaves the time of the write.
    extra = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)$/.test(entry.mtime) ? entry.mtime : "now";
  }
  const dump = await dumpOf(source, signal);
  const shell = startRestoreShell(username, parent, [entry.kind, name, mode, extra, member], signal);
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
    console.error(`[backups] restoring ${shown} as ${username} failed: ${exitReason(exit)}${dumpFailure ? `; restic: ${dumpFailure.message}` : ""}`);
    return "failed";
  }
  if (dumpFailure) throw dumpFailure;
  return "restored";
}

/** Removes `name` (and all it holds) from the directory open as `parent`, as `username`: what a failed restore made there. */
export async function removeAsUser(username: string, parent: FileHandle, name: string): Promise<void> {
  const shell = startRestoreShell(username, parent, ["remove", name, "", "", ""]);
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
