import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { AppError } from "@/lib/errors";
import { linuxUserExists } from "./passwd";

// Home directories and Linux users of hosting accounts. A home is HOME_ROOT/<username>/
// (0750, group of the web server so nginx can read the sites and nothing else can), with
// public_html and a private tmp (0700, PHP's uploads and sessions).

const run = promisify(execFile);

const USERNAME = /^[a-z][a-z0-9_]{0,31}$/;

function checkedName(username: string): string {
  if (!USERNAME.test(username)) throw new Error(`not an account username: ${username}`);
  return username;
}

export const NO_LOGIN_SHELL = "/usr/sbin/nologin";
export const LOGIN_SHELL = "/bin/bash";

async function lookup(database: "passwd" | "group", name: string): Promise<string[] | null> {
  try {
    const { stdout } = await run("getent", [database, name]);
    return stdout.trim().split(":");
  } catch (error) {
    // getent exits 2 when the name is unknown.
    if ((error as { code?: number }).code === 2) return null;
    throw error;
  }
}

async function ids(user: string | null, group: string): Promise<{ uid: number; gid: number }> {
  const groupEntry = await lookup("group", group);
  if (!groupEntry) throw new AppError("VALIDATION", `The web server's group ${group} does not exist on this server`);
  const userEntry = user ? await lookup("passwd", user) : null;
  return { uid: userEntry ? Number(userEntry[2]) : process.getuid!(), gid: Number(groupEntry[2]) };
}

async function command(program: string, args: string[]): Promise<void> {
  try {
    await run(program, args, { timeout: 30_000 });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    throw new AppError("VALIDATION", `${program} failed: ${(stderr || (error as Error).message).trim()}`);
  }
}

/** useradd: a user of its own group, home HOME_ROOT/<username> (made by createHome). */
export async function createSystemUser(username: string, home: string, shell: string): Promise<void> {
  await command("useradd", ["--no-create-home", "--home-dir", home, "--shell", shell, "--user-group", checkedName(username)]);
}

export async function setLoginShell(username: string, shell: string): Promise<void> {
  await command("usermod", ["--shell", shell, checkedName(username)]);
}

/** userdel, and nothing when the user is already gone. */
export async function removeSystemUser(username: string): Promise<void> {
  if (await linuxUserExists(checkedName(username))) await command("userdel", [username]);
}

/**
 * Creates (or repairs) the home and its public_html and tmp, owned by `owner` (the account's
 * Linux user; null: the panel's own user) with the web server's group.
 */
export async function createHome(home: string, owner: string | null, webGroup: string): Promise<void> {
  const { uid, gid } = await ids(owner, webGroup);
  for (const [dir, mode] of [
    [home, 0o750],
    [path.join(home, "public_html"), 0o750],
    [path.join(home, "tmp"), 0o700],
  ] as const) {
    await fs.mkdir(dir, { recursive: true });
    await fs.chown(dir, uid, gid);
    await fs.chmod(dir, mode);
  }
}

/** A domain's document root inside the home, made like public_html. */
export async function createDocumentRoot(home: string, documentRoot: string, owner: string | null, webGroup: string): Promise<void> {
  const relative = path.relative(home, documentRoot);
  if (relative.startsWith("..") || path.isAbsolute(relative)) throw new Error(`document root outside the home: ${documentRoot}`);
  const { uid, gid } = await ids(owner, webGroup);
  let dir = home;
  for (const part of relative.split(path.sep).filter(Boolean)) {
    dir = path.join(dir, part);
    const made = await fs.mkdir(dir).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === "EEXIST") return false;
        throw error;
      },
    );
    if (made) {
      await fs.chown(dir, uid, gid);
      await fs.chmod(dir, 0o750);
    }
  }
}

/** Termination only: the customer's files go with the account, never with a domain. */
export async function removeHome(home: string): Promise<void> {
  await fs.rm(home, { recursive: true, force: true });
}

/** The size of a directory tree in bytes, measured by `du` in a child process (never on the event loop). */
export async function measureBytes(dir: string): Promise<number | null> {
  try {
    const { stdout } = await run("du", ["-s", "-B1", dir], { timeout: 10 * 60_000 });
    return Number(stdout.split(/\s/)[0]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || /No such file/.test((error as { stderr?: string }).stderr ?? "")) return null;
    throw error;
  }
}
