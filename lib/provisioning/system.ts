import { type ChildProcess, spawn, type StdioOptions } from "node:child_process";
import { randomBytes } from "node:crypto";
import fsSync from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { AppError } from "@/lib/errors";

// What every provisioning module needs from the machine: files replaced atomically, and child
// processes started the one way the panel starts them (startChild): without a shell, and with an
// environment the caller names. A child never inherits the panel's own environment, which holds
// what panel.env set (database and MariaDB credentials, AUTH_SECRET): a process running as a
// customer can read its own /proc/<pid>/environ, so anything it inherits is the customer's.

/** A file to write whole: its path, text and permissions (default 0600: the panel's alone), and its owner when not root. */
export interface FileToWrite {
  path: string;
  contents: string;
  mode?: number;
  owner?: { uid: number; gid: number };
}

const PANEL_ONLY = 0o600;

// Up to this many files, an fsync each; more, and one flush of their whole file system (syncfs,
// through `sync -f`) instead. Measured at start-up (10,000 files of ~1.5 KB on ext4, this
// 2-core machine): the fsyncs took 3–4 s of the 5–7 s a batch took, one `sync -f` 0.1–0.2 s.
// Not below: a syncfs also waits for whatever else was written to the file system, and an
// ordinary change writes one file or a few.
const MOST_FILES_FSYNCED_ONE_BY_ONE = 64;

const PARALLEL_FILES = 64;

/** `.<name>.<12 hex>.tmp` beside the target; one random `batch` for all the files of a batch (their names differ). */
const temporaryPath = (target: string, batch: string) => path.join(path.dirname(target), `.${path.basename(target)}.${batch}.tmp`);

/**
 * Writes each file through a temporary file and rename: readers see old or new, never half.
 * Every temporary file is on disk before the first rename (fsync'd one by one, or for a large
 * batch by one flush of the file system), so a crash leaves old or new too. On a failure the
 * temporary files left are removed and the error thrown; files already renamed stay (each is
 * whole: callers that must undo a batch put back what they read before it).
 *
 * The temporary files are created, written and renamed synchronously: each of those steps is a
 * few tens of µs of the kernel's work, less than a trip through libuv's thread pool and a promise
 * (10,000 files of 1.5 KB, this machine: 0.6 s so, 1.1–1.4 s through fs/promises). Only the
 * flush, which waits for the disk, is asynchronous.
 */
export async function writeFilesAtomically(files: readonly FileToWrite[]): Promise<void> {
  const dirs = [...new Set(files.map((file) => path.dirname(file.path)))];
  for (const dir of dirs) fsSync.mkdirSync(dir, { recursive: true });
  const batch = randomBytes(6).toString("hex");
  const temporaries: string[] = [];
  try {
    for (const file of files) {
      const temporary = temporaryPath(file.path, batch);
      // O_EXCL: a new file, never one (or a link) already there; made 0600 whatever the umask.
      const fd = fsSync.openSync(temporary, "wx", PANEL_ONLY);
      temporaries.push(temporary);
      try {
        // Given its owner and mode before it takes the target's place: never readable by the
        // wrong one. The mode is set, not left to the umask (the panel's is 0077: lib/data-dir.ts).
        if (file.owner) fsSync.fchownSync(fd, file.owner.uid, file.owner.gid);
        if ((file.mode ?? PANEL_ONLY) !== PANEL_ONLY) fsSync.fchmodSync(fd, file.mode!);
        fsSync.writeFileSync(fd, file.contents);
      } finally {
        fsSync.closeSync(fd);
      }
    }
    if (files.length <= MOST_FILES_FSYNCED_ONE_BY_ONE) await fsyncEach(temporaries);
    else await flushToDisk(dirs, temporaries);
    files.forEach((file, index) => fsSync.renameSync(temporaries[index], file.path));
  } catch (error) {
    for (const temporary of temporaries) fsSync.rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * Gives each existing regular file `mode` (and `owner`, when given) where it differs: files a
 * batch found unchanged keep the modes an older version gave them otherwise. Opened without
 * following a link, changed through the descriptor; missing files are skipped.
 */
export function repairModes(files: readonly string[], mode: number, owner?: { uid: number; gid: number }): void {
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fsSync.constants;
  for (const file of files) {
    const stat = fsSync.lstatSync(file, { throwIfNoEntry: false });
    if (!stat?.isFile()) continue;
    const ownerDiffers = owner !== undefined && (stat.uid !== owner.uid || stat.gid !== owner.gid);
    if ((stat.mode & 0o7777) === mode && !ownerDiffers) continue;
    const fd = fsSync.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    try {
      if (ownerDiffers) fsSync.fchownSync(fd, owner.uid, owner.gid);
      fsSync.fchmodSync(fd, mode);
    } finally {
      fsSync.closeSync(fd);
    }
  }
}

/**
 * Makes `dir` and every missing directory above it with `mode` exactly: mkdir's mode is cut by
 * the umask, and the panel's is 0077 (lib/data-dir.ts), so a directory another program must
 * enter (nginx's workers, sshd, a name server) gets its mode here. Existing ones are left as
 * they are (the administrator's).
 */
export async function makeDirectories(dir: string, mode: number): Promise<void> {
  const first = await fs.mkdir(dir, { recursive: true, mode });
  if (first === undefined) return;
  for (let made = dir; ; made = path.dirname(made)) {
    await fs.chmod(made, mode);
    if (made === first || made === path.dirname(made)) return;
  }
}

/** Writes one file as writeFilesAtomically does (fsync'd). */
export async function writeAtomically(
  target: string,
  contents: string,
  mode = PANEL_ONLY,
  owner?: { uid: number; gid: number },
): Promise<void> {
  await writeFilesAtomically([{ path: target, contents, mode, owner }]);
}

/** Puts each file on disk (fsync), a few at a time. */
async function fsyncEach(files: string[]): Promise<void> {
  await eachLimited(files, PARALLEL_FILES, async (file) => {
    const handle = await fs.open(file, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  });
}

/**
 * Puts the files on disk: one `sync -f` (syncfs) per directory's file system; where that fails
 * (a `sync` without -f), an fsync of each file.
 */
async function flushToDisk(dirs: string[], files: string[]): Promise<void> {
  for (const dir of dirs) {
    const failure = await runCommand("sync -f {dir}", { dir });
    if (failure !== null) return fsyncEach(files);
  }
}

/** The file's text, or null when there is none. */
export async function readIfExists(file: string): Promise<string | null> {
  return fs.readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
}

/**
 * Each file's text, or null when there is none, by path. Each directory is listed first and
 * only the files it holds are read: a first start, on empty directories, opens none.
 */
export async function readFilesIfExist(files: readonly string[]): Promise<Map<string, string | null>> {
  const listed = new Map<string, Set<string>>();
  for (const dir of new Set(files.map((file) => path.dirname(file)))) {
    const names = await fs.readdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [] as string[];
      throw error;
    });
    listed.set(dir, new Set(names));
  }
  const contents = new Map<string, string | null>(files.map((file) => [file, null]));
  const present = files.filter((file) => listed.get(path.dirname(file))?.has(path.basename(file)));
  await eachLimited(present, PARALLEL_FILES, async (file) => void contents.set(file, await readIfExists(file)));
  return contents;
}

/** The environment of a child process: always given in full, never inherited. */
export type ChildEnv = Readonly<Record<string, string>>;

const STANDARD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * For a program the panel runs as root (nginx -t, useradd, restic…): the administrator's PATH, a
 * fixed locale, and `extra` (what that program needs, never a secret: secrets go in a 0600 file or
 * on standard input).
 */
export function toolEnv(extra: Record<string, string> = {}): ChildEnv {
  return { PATH: process.env.PATH || STANDARD_PATH, LANG: "C.UTF-8", ...extra };
}

/** For a program that runs as a customer (runAsUser): fixed, nothing of the panel's nor of root's. */
export const CUSTOMER_ENV: ChildEnv = Object.freeze({ PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" });

export interface ChildOptions {
  env: ChildEnv;
  /** Default: no standard input, output and error piped. */
  stdio?: StdioOptions;
  timeoutMs?: number;
}

/**
 * A value a program takes as a positional argument (a user, a group, a snapshot id, a path):
 * refused before the call when the program could read it as an option — empty, or starting with
 * `-` — or when it holds a NUL. Every call writes `--` before its positional arguments as well
 * (docs/security.md "Nodes are not trusted"): the check names the bad value, `--` is the wall.
 */
export function operand(what: string, value: string): string {
  if (typeof value !== "string" || value === "" || value.startsWith("-") || value.includes("\0")) {
    throw new AppError("VALIDATION", `${what} ${JSON.stringify(String(value).slice(0, 80))} is refused: a program would read it as an option`);
  }
  return value;
}

/** The one way the panel starts a program: no shell, and exactly the environment `options.env`. */
export function startChild(program: string, args: readonly string[], options: ChildOptions): ChildProcess {
  return spawn(program, args, { env: { ...options.env } as NodeJS.ProcessEnv, stdio: options.stdio ?? ["ignore", "pipe", "pipe"], timeout: options.timeoutMs });
}

/** Where `program` is on the administrator's PATH (toolEnv's), or `program` itself when not found. */
function onToolPath(program: string): string {
  for (const dir of toolEnv().PATH.split(":")) {
    const candidate = path.join(dir, program);
    try {
      fsSync.accessSync(candidate, fsSync.constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return program;
}

/**
 * `program` run as the account's Linux user `username` (runuser, found on root's PATH: the
 * customer's fixed PATH has no sbin), with CUSTOMER_ENV.
 */
export function startAsUser(username: string, program: string, args: readonly string[], options: Omit<ChildOptions, "env"> = {}): ChildProcess {
  if (!/^[a-z][a-z0-9_]{0,31}$/.test(username)) throw new Error(`not an account username: ${JSON.stringify(username)}`);
  return startChild(onToolPath("runuser"), ["-u", username, "--", program, ...args], { ...options, env: CUSTOMER_ENV });
}

/** How runChild's program ended, with its standard output. */
export interface ChildResult extends ChildExit {
  stdout: string;
}

/**
 * Runs a program to its end (startChild), `input` written to its standard input; its exit and
 * output. Rejects only when it could not run at all (childExit).
 */
export async function runChild(program: string, args: readonly string[], options: ChildOptions & { input?: string }): Promise<ChildResult> {
  const child = startChild(program, args, { ...options, stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
  if (options.input !== undefined) {
    child.stdin!.on("error", () => undefined); // the program gone: its exit says why
    child.stdin!.end(options.input);
  }
  let stdout = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  return { ...(await childExit(child)), stdout };
}

/**
 * Runs a configured command line (split on spaces, no shell: a value never becomes shell
 * syntax), `{name}` placeholders replaced per word, with toolEnv(). Resolves with why it failed,
 * or null.
 */
export async function runCommand(
  command: string,
  placeholders: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<string | null> {
  const [program, ...args] = command
    .trim()
    .split(/\s+/)
    .map((word) => word.replace(/\{(\w+)\}/g, (whole, name: string) => placeholders[name] ?? whole));
  try {
    const result = await runChild(program, args, { env: toolEnv(), timeoutMs });
    if (result.code === 0) return null;
    const output = `${result.stdout}\n${result.stderr}`.trim().slice(-2000);
    return `${command} exited with ${result.signal ?? result.code}${output ? `: ${output}` : ""}`;
  } catch (error) {
    return `${program}: ${(error as Error).message}`;
  }
}

/** How a child process ended: its exit code (null when a signal ended it), that signal, the end of its standard error. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Waits for `child` (spawned with its standard error piped) to end, keeping the last `keep`
 * characters of its standard error, trimmed. Rejects only when it could not run at all (not
 * found, not executable: the child's "error" event); any exit, however it failed, resolves.
 */
export function childExit(child: ChildProcess, keep = 2000): Promise<ChildExit> {
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr = (stderr + chunk).slice(-keep)));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stderr: stderr.trim() }));
  });
}

/** How a failed exit is named in a message: its standard error, else its exit code or signal. */
export const exitReason = (exit: ChildExit) => exit.stderr || `exit ${exit.signal ?? exit.code}`;

/**
 * Runs `task` over `items`, at most `limit` at a time: thousands of small file reads and
 * fsync'd writes (start-up) overlap instead of waiting for each other. After a failure no further
 * item is started, and the first error is thrown only once the tasks under way have ended, so a
 * caller that then restores what it changed is not overwritten by a write still running.
 */
export async function eachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      try {
        await task(items[next++]);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const outcomes = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failure = outcomes.find((outcome) => outcome.status === "rejected");
  if (failure) throw failure.reason;
}
