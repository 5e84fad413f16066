import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { type ChildEnv, childExit, exitReason, startChild, toolEnv } from "./system";

// restic (Debian `restic`), run without a shell: the repository is BACKUP_REPOSITORY, its
// password only ever in BACKUP_PASSWORD_FILE (made once, 0600) and handed to restic as
// RESTIC_PASSWORD_FILE, never on a command line or in a log. Every failure is an AppError with
// restic's own last lines, which the backup status shows.

/** A backup or restore may take hours; a list of snapshots does not (a page waits for it). */
const TIMEOUT_MS = 6 * 60 * 60_000;
const LIST_TIMEOUT_MS = 2 * 60_000;

/** The repository password file: made with 32 random bytes the first time, kept 0600. */
export async function ensurePasswordFile(): Promise<string> {
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
    RESTIC_REPOSITORY: env().backup.repository,
    RESTIC_PASSWORD_FILE: passwordFile,
    RESTIC_CACHE_DIR: path.join(env().dataDir, "restic-cache"),
  });
}

const failure = (args: string[], why: string) => new AppError("VALIDATION", `restic ${args[0]} failed: ${why.trim().split("\n").slice(-4).join(" ")}`);

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

/** restic's standard output as a stream (restic dump), for a restore that pipes it on. */
export async function resticStream(args: string[]): Promise<{ stdout: Readable; done: Promise<void> }> {
  const passwordFile = await ensurePasswordFile();
  const child = startChild(env().backup.restic, args, { env: resticEnv(passwordFile), stdio: ["ignore", "pipe", "pipe"], timeoutMs: TIMEOUT_MS });
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
  const message = (error as Error).message ?? "";
  return /unable to open config file/i.test(message) && /no such file or directory|does not exist/i.test(message);
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

// Reads (snapshots, stats, dump, restore) pass --no-lock: a list or a restore must not fail
// with "repository is already locked" while the nightly job prunes.
export async function snapshotsTagged(tag: string): Promise<ResticSnapshot[]> {
  return JSON.parse(await restic(["snapshots", "--no-lock", "--json", "--tag", tag], undefined, LIST_TIMEOUT_MS)) as ResticSnapshot[];
}
