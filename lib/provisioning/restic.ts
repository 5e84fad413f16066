import { AsyncLocalStorage } from "node:async_hooks";
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { stopOnAbort } from "./stop-on-abort";
import { type ChildEnv, childExit, exitReason, operand, startChild, toolEnv } from "./system";

// restic (Debian `restic`), run without a shell: the repository is BACKUP_REPOSITORY, its
// password only ever in BACKUP_PASSWORD_FILE (made once, 0600) and handed to restic as
// RESTIC_PASSWORD_FILE, never on a command line or in a log — or, for the work inside
// withRepository, a move's own repository and password file (lib/provisioning/move-runs.ts). A failure is a ResticError: a short
// reason in the panel's own words (what the backup status and the API show), restic's own
// words, which name server paths and the repository's address, only in the panel's log.

/** A backup or restore may take hours; a list of snapshots does not (a page waits for it). */
const TIMEOUT_MS = 6 * 60 * 60_000;
const LIST_TIMEOUT_MS = 2 * 60_000;

/** A repository other than BACKUP_REPOSITORY: where it is, and the file (0600) holding its password. */
export interface RepositoryAccess {
  repository: string;
  passwordFile: string;
}

const scopedRepository = new AsyncLocalStorage<RepositoryAccess>();

/** Runs `work` with every restic command of it on `access`'s repository instead of BACKUP_REPOSITORY. */
export function withRepository<T>(access: RepositoryAccess, work: () => Promise<T>): Promise<T> {
  return scopedRepository.run(access, work);
}

/** The repository password file: the scoped repository's, or BACKUP_PASSWORD_FILE made with 32 random bytes the first time, kept 0600. */
export async function ensurePasswordFile(): Promise<string> {
  const scoped = scopedRepository.getStore();
  if (scoped) return scoped.passwordFile;
  const file = env().backup.passwordFile;
  try {
    await fs.writeFile(file, `${randomBytes(32).toString("base64url")}\n`, { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return file;
}

/** restic's environment: where the repository, its password file and restic's cache are. */
function resticEnv(passwordFile: string): ChildEnv {
  return toolEnv({
    RESTIC_REPOSITORY: scopedRepository.getStore()?.repository ?? env().backup.repository,
    RESTIC_PASSWORD_FILE: passwordFile,
    RESTIC_CACHE_DIR: path.join(env().dataDir, "restic-cache"),
  });
}

/** What restic says, as the panel names it; anything else is "see the log". */
const REASONS: [RegExp, string][] = [
  [/wrong password or no key found/i, "wrong password or no key found (BACKUP_PASSWORD_FILE)"],
  [/connection refused/i, "connection refused by the repository's server"],
  [/no such host|server misbehaving|name resolution/i, "the repository's host name does not resolve"],
  [/i\/o timeout|timed out|deadline exceeded/i, "the repository's server did not answer in time"],
  [/unable to start the sftp session/i, "unable to start the sftp session"],
  [/no space left on device/i, "no space left on device"],
  [/disk quota exceeded/i, "disk quota exceeded"],
  [/permission denied/i, "permission denied"],
  [/repository is already locked|unable to create lock/i, "the repository is locked by another restic"],
  [/unable to open config file/i, "no repository at BACKUP_REPOSITORY"],
];

/**
 * A restic command that failed: `message` the short reason (status, answers), `detail` restic's
 * own last lines (the log, and isMissingRepository), never shown to a client.
 */
export class ResticError extends AppError {
  constructor(
    readonly command: string,
    readonly detail: string,
  ) {
    const reason = REASONS.find(([pattern]) => pattern.test(detail))?.[1] ?? "see the panel's log";
    super("VALIDATION", `restic ${command} failed: ${reason}`);
    this.name = "ResticError";
  }
}

/** The failure of `restic args…`, logged with restic's words unless it is the expected "no repository yet". */
function failure(args: string[], why: string): ResticError {
  const error = new ResticError(args[0], why.trim().split("\n").slice(-4).join(" "));
  if (!isMissingRepository(error)) console.error(`[backups] restic ${args[0]} failed: ${error.detail}`);
  return error;
}

/**
 * Runs restic with `args`; `input`: a stream for its standard input (a database dump), piped,
 * never on disk. Resolves with its standard output.
 */
export async function restic(args: string[], input?: Readable, timeoutMs = TIMEOUT_MS): Promise<string> {
  const passwordFile = await ensurePasswordFile();
  return new Promise((resolve, reject) => {
    const child: ChildProcess = startChild(env().backup.restic, args, {
      env: resticEnv(passwordFile),
      stdio: [input ? "pipe" : "ignore", "pipe", "pipe"],
      timeoutMs,
    });
    const out: Buffer[] = [];
    child.stdout!.on("data", (chunk: Buffer) => out.push(chunk));
    // restic gone before its input ended (it failed): the input is closed, so the program writing
    // it (mariadb-dump, tar) ends on the closed pipe instead of waiting for a reader forever.
    if (input) child.once("close", () => input.destroy());
    childExit(child, 4000).then(
      (exit) => (exit.code === 0 ? resolve(Buffer.concat(out).toString("utf8")) : reject(failure(args, exitReason(exit)))),
      (error: Error) => reject(failure(args, `${error.message} (Debian package restic)`)),
    );
    if (input) {
      input.on("error", (error) => {
        child.kill();
        reject(failure(args, `its input failed: ${error.message}`));
      });
      child.stdin!.on("error", () => undefined);
      input.pipe(child.stdin!);
    }
  });
}

/**
 * restic's standard output as a stream (restic dump, ls), for a restore that pipes it on; it is
 * stopped (SIGTERM) when `signal` aborts.
 */
export async function resticStream(args: string[], signal?: AbortSignal): Promise<{ stdout: Readable; done: Promise<void> }> {
  const passwordFile = await ensurePasswordFile();
  const child = startChild(env().backup.restic, args, { env: resticEnv(passwordFile), stdio: ["ignore", "pipe", "pipe"], timeoutMs: TIMEOUT_MS });
  stopOnAbort(child, signal);
  const done = childExit(child, 4000).then(
    (exit) => {
      if (exit.code !== 0) throw failure(args, exitReason(exit));
    },
    (error: Error) => {
      throw failure(args, error.message);
    },
  );
  return { stdout: child.stdout!, done };
}

/**
 * restic's error for a repository that is not there (yet): its config file missing — a local
 * path without one, or a server answering that it has none. An unreachable server ("connection
 * refused", "no such host") or a wrong password is not that: it is the error to show.
 */
export function isMissingRepository(error: unknown): boolean {
  if (!(error instanceof ResticError)) return false;
  return /unable to open config file/i.test(error.detail) && /no such file or directory|does not exist/i.test(error.detail);
}

/** Makes the repository when it has none (a local path or any restic repository string). */
export async function ensureRepository(): Promise<void> {
  try {
    await restic(["cat", "config"]);
  } catch (error) {
    if (!isMissingRepository(error)) throw error;
    await restic(["init"]);
  }
}

export interface ResticSnapshot {
  id: string;
  short_id: string;
  time: string;
  paths: string[];
  tags?: string[];
}

/** A snapshot's id as restic writes it: 64 hex digits, nothing else (a short id, a name, an option). */
export const SNAPSHOT_ID = /^[0-9a-f]{64}$/;

/** `id` when it is a snapshot id (SNAPSHOT_ID); anything else is refused before restic sees it. */
export function snapshotId(id: string): string {
  if (typeof id !== "string" || !SNAPSHOT_ID.test(id)) throw new AppError("VALIDATION", `${JSON.stringify(String(id).slice(0, 80))} is not a snapshot id (64 hex digits)`);
  return id;
}

/** `--tag=<tag>`: one word, so a tag is never read as an option of its own. */
export const tagOption = (tag: string) => `--tag=${tag}`;

// Every positional argument comes after `--` (snapshot ids checked by snapshotId, paths by
// operand), every option's value is joined to it (`--tag=…`): nothing a record, a customer or a
// node's answer holds is read by restic as an option.
// Reads (snapshots, stats, ls, dump) pass --no-lock: a list or a restore must not fail with
// "repository is already locked" while the nightly job prunes.
/**
 * The snapshots holding any of `tagLists` (each one tag, or tags joined by commas that a snapshot
 * must all hold): one restic run, however many lists are asked.
 */
export async function snapshotsTagged(...tagLists: string[]): Promise<ResticSnapshot[]> {
  return JSON.parse(await restic(["snapshots", "--no-lock", "--json", ...tagLists.map(tagOption)], undefined, LIST_TIMEOUT_MS)) as ResticSnapshot[];
}

/**
 * The snapshots `ids` as the repository itself describes them (their paths, tags, time), by id,
 * in one restic run; an id the repository does not hold is absent.
 */
export async function snapshotsById(ids: string[]): Promise<Map<string, ResticSnapshot>> {
  if (!ids.length) return new Map();
  const listed = JSON.parse(await restic(["snapshots", "--no-lock", "--json", "--", ...ids.map(snapshotId)], undefined, LIST_TIMEOUT_MS)) as ResticSnapshot[] | null;
  return new Map((listed ?? []).filter((snapshot) => ids.includes(snapshot.id)).map((snapshot) => [snapshot.id, snapshot]));
}

/** The snapshot `id` as the repository itself describes it; null when it holds none of that id. */
export async function snapshotById(id: string): Promise<ResticSnapshot | null> {
  return (await snapshotsById([id])).get(id) ?? null;
}

/** One entry of a snapshot's tree as `restic ls --json` gives it. */
interface ResticNode {
  struct_type: string;
  type?: string;
  path?: string;
  size?: number;
  /** Go's os.FileMode: the permission bits in the low 9, type bits above. */
  mode?: number;
  mtime?: string;
}

/** What a snapshot holds at one path: a file or a folder, its permission bits and modification time, and the bytes of the files it is or holds. */
export interface SnapshotEntry {
  kind: "file" | "folder" | "other";
  mode: number;
  mtime: string;
  bytes: number;
}

/**
 * The entry at `target` (an absolute path inside the snapshot) and everything below it, read from
 * `restic ls --recursive` line by line (a large tree is never one string); null when the
 * snapshot does not hold it.
 */
export async function snapshotEntry(id: string, target: string, signal?: AbortSignal): Promise<SnapshotEntry | null> {
  const { stdout, done } = await resticStream(["ls", "--no-lock", "--json", "--recursive", "--", snapshotId(id), operand("a path in the snapshot", target)], signal);
  let entry: SnapshotEntry | null = null;
  let bytes = 0;
  for await (const line of createInterface({ input: stdout, crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    const node = JSON.parse(line) as ResticNode;
    if (node.struct_type !== "node" || !node.path) continue;
    if (node.path === target) {
      entry = {
        kind: node.type === "file" ? "file" : node.type === "dir" ? "folder" : "other",
        mode: (node.mode ?? 0o600) & 0o777,
        mtime: node.mtime ?? "",
        bytes: 0,
      };
    }
    // restic's filter is a prefix of the path: only what lies at or below the target counts.
    if ((node.path === target || node.path.startsWith(`${target}/`)) && node.type === "file") bytes += node.size ?? 0;
  }
  await done;
  return entry && { ...entry, bytes };
}
