import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";

// What every provisioning module needs from the machine: files replaced atomically and
// configured commands run without a shell.

/**
 * Writes `target` through a temporary file, fsync and rename: readers see old or new, never
 * half. `owner`: the file is given to them before it takes the target's place.
 */
export async function writeAtomically(
  target: string,
  contents: string,
  mode = 0o644,
  owner?: { uid: number; gid: number },
): Promise<void> {
  await fs.mkdir(path.dirname(target), { recursive: true });
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  const handle = await fs.open(temporary, "w", mode);
  try {
    try {
      if (owner) await handle.chown(owner.uid, owner.gid);
      await handle.writeFile(contents);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temporary, target);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
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
 * Runs a configured command line (split on spaces, no shell: a value never becomes shell
 * syntax), `{name}` placeholders replaced per word. Resolves with why it failed, or null.
 */
export function runCommand(
  command: string,
  placeholders: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<string | null> {
  const [program, ...args] = command
    .trim()
    .split(/\s+/)
    .map((word) => word.replace(/\{(\w+)\}/g, (whole, name: string) => placeholders[name] ?? whole));
  return new Promise((resolve) => {
    const child = spawn(program, args, { stdio: ["ignore", "pipe", "pipe"], timeout: timeoutMs });
    let output = "";
    const keep = (chunk: Buffer) => (output = (output + chunk).slice(-2000));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (error) => resolve(`${program}: ${error.message}`));
    child.on("close", (code, signal) => {
      if (code === 0) resolve(null);
      else resolve(`${command} exited with ${signal ?? code}${output.trim() ? `: ${output.trim()}` : ""}`);
    });
  });
}

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
