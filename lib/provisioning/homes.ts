import { execFile } from "node:child_process";
import fs, { type FileHandle } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { AppError } from "@/lib/errors";
import { makeDirectoryIn, openDirectoryIn, openDirectoryPath, openTrustedDirectory, removeTreeIn, runOnDescriptors } from "./home-files";
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
 * Linux user; null: the panel's own user) with the web server's group. Each directory is made,
 * opened and changed through handles (./home-files.ts): public_html or tmp replaced by a link
 * → LinkInHomeError (422), and nothing outside the home is touched.
 */
export async function createHome(home: string, owner: string | null, webGroup: string): Promise<void> {
  const { uid, gid } = await ids(owner, webGroup);
  await fs.mkdir(path.dirname(home), { recursive: true });
  const homes = await openTrustedDirectory(path.dirname(home));
  if (!homes) throw new Error(`no directory ${path.dirname(home)} for the homes`);
  try {
    const homeDir = await makeDirectoryIn(homes, path.basename(home), { uid, gid, mode: 0o750 }, { repair: true });
    try {
      for (const [name, mode] of [
        ["public_html", 0o750],
        ["tmp", 0o700],
      ] as const) {
        await (await makeDirectoryIn(homeDir, name, { uid, gid, mode }, { repair: true })).close();
      }
    } finally {
      await homeDir.close();
    }
  } finally {
    await homes.close();
  }
}

/** Opens the home (HOME_ROOT/<username>: HOME_ROOT is trusted, the home is not followed if a link); null when missing. */
async function openHome(home: string): Promise<FileHandle | null> {
  const homes = await openTrustedDirectory(path.dirname(home));
  if (!homes) return null;
  try {
    return await openDirectoryIn(homes, path.basename(home));
  } finally {
    await homes.close();
  }
}

/**
 * A domain's document root inside the home, made like public_html: each missing directory on
 * the way is made and given to the owner; a link on the way → LinkInHomeError (422), nothing made.
 */
export async function createDocumentRoot(home: string, documentRoot: string, owner: string | null, webGroup: string): Promise<void> {
  const relative = path.relative(home, documentRoot);
  if (relative.startsWith("..") || path.isAbsolute(relative)) throw new Error(`document root outside the home: ${documentRoot}`);
  const { uid, gid } = await ids(owner, webGroup);
  const homeDir = await openHome(home);
  if (!homeDir) throw new Error(`no home at ${home}`);
  try {
    await (await openDirectoryPath(homeDir, relative, { uid, gid, mode: 0o750 }))?.close();
  } finally {
    await homeDir.close();
  }
}

/**
 * Termination only: the customer's files go with the account, never with a domain. Links are
 * unlinked, never followed (removeTreeIn, ./home-files.ts).
 */
export async function removeHome(home: string): Promise<void> {
  const homes = await openTrustedDirectory(path.dirname(home));
  if (!homes) return;
  try {
    await removeTreeIn(homes, path.basename(home));
  } finally {
    await homes.close();
  }
}

/**
 * The size of a home in bytes, measured by `du` in a child process (never on the event loop).
 * du gets the home opened without following a link, as fd 3: -H follows only that argument
 * (/dev/fd/3, the open directory), no link below it, and -x keeps it on the home's file system.
 */
export async function measureBytes(dir: string): Promise<number | null> {
  const handle = await openHome(dir);
  if (!handle) return null;
  try {
    const stdout = await runOnDescriptors("du", ["-s", "-B1", "-H", "-x", "--", "/dev/fd/3"], [handle], 10 * 60_000);
    const bytes = Number(stdout.split(/\s/)[0]);
    if (!stdout || !Number.isFinite(bytes)) throw new Error(`du gave no size: ${stdout.trim()}`);
    return bytes;
  } finally {
    await handle.close();
  }
}
