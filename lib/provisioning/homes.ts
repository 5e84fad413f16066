import fs, { type FileHandle } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { AppError, validationError } from "@/lib/errors";
import { makeDirectoryIn, makeFileIn, openDirectoryIn, openDirectoryPath, openTrustedDirectory, removeTreeIn, runOnDescriptors } from "./home-files";
import { ensurePanelGroup, mayRemoveUser, PANEL_GROUP } from "./marks";
import { linuxGroupExists, linuxGroupIds, linuxGroupMembers, linuxUserExists, linuxUserId } from "./passwd";
import { exitReason, makeDirectories, operand, runChild, toolEnv } from "./system";

// Home directories and Linux users of hosting accounts. With a Linux user per account
// (SYSTEM_USERS=1) a home is HOME_ROOT/<username>/, root's, group the account's own, 0750: sshd
// chroots SFTP-only logins into it (it must be root's and writable by nobody else), the
// account's processes enter it through the group, and the web server's user is a member of each
// account's group, so nginx can read the sites and no other account can — whatever modes the
// customer gives their files. Inside, the customer's own public_html (0750, group of the web
// server), a private tmp (0700, PHP's uploads and sessions), root's logs/ and run/ (the proxy
// profile's sockets). Without Linux users the home is the panel's (0750, group of the web server).

const USERNAME = /^[a-z][a-z0-9_]{0,31}$/;

function checkedName(username: string): string {
  if (!USERNAME.test(username)) throw new Error(`not an account username: ${username}`);
  return username;
}

/** The logs in HOME/logs/ that the account's processes write: PHP's errors, cron's output. */
export const ACCOUNT_WRITTEN_LOGS = ["php-error.log", "cron.log"] as const;

export const NO_LOGIN_SHELL = "/usr/sbin/nologin";
export const LOGIN_SHELL = "/bin/bash";

/** The id of a group (an account's own, named like its user). */
export async function groupIdOf(group: string): Promise<number> {
  const gid = (await linuxGroupIds()).get(group);
  if (gid === undefined) throw new Error(`no group ${group}`);
  return gid;
}

async function ids(user: string | null, group: string): Promise<{ uid: number; gid: number }> {
  const gid = (await linuxGroupIds()).get(group);
  if (gid === undefined) throw new AppError("VALIDATION", `The web server's group ${group} does not exist on this server`);
  const uid = user ? await linuxUserId(user) : null;
  return { uid: uid ?? process.getuid!(), gid };
}

/**
 * What a refused user-management command answers: a 422 naming the request's field, in the
 * panel's words. The program's own words (which name other users, groups and files of this
 * machine) go to the panel's log only.
 */
interface Refusal {
  field?: string;
  says: string;
}

const refusalError = ({ field, says }: Refusal) => (field ? validationError(field, says) : new AppError("VALIDATION", says));

/**
 * Runs a user-management program (`input`: its standard input, where a secret goes: never onto
 * its command line, which ps shows, nor into the log, which gets only the program and arguments).
 */
async function command(program: string, args: string[], refusal: Refusal, input?: string): Promise<void> {
  const result = await runChild(program, args, { env: toolEnv(), input, timeoutMs: 30_000 }).catch((error: Error) => {
    console.error(`[homes] ${program} could not run: ${error.message}`);
    throw refusalError(refusal);
  });
  if (result.code !== 0) {
    console.error(`[homes] ${program} ${args.join(" ")} failed: ${exitReason(result)}`);
    throw refusalError(refusal);
  }
}

/**
 * useradd: a user of its own group, home HOME_ROOT/<username> (made by createHome), password
 * field `*`: no password matches it, yet the account is not locked, so sshd accepts its keys. It
 * is made with the panel's mark (a member of PANEL_GROUP, ./marks.ts) in the same step.
 */
export async function createSystemUser(username: string, home: string, shell: string): Promise<void> {
  await ensurePanelGroup();
  await command(
    "useradd",
    ["--no-create-home", "--home-dir", home, "--shell", shell, "--password", "*", "--user-group", "--groups", PANEL_GROUP, "--", checkedName(username)],
    { field: "username", says: "could not be made a Linux user on this server" },
  );
}

/** Adds `member` (a user) to `group`; false (and nothing done) when it is a member already. */
export async function addGroupMember(group: string, member: string): Promise<boolean> {
  if ((await linuxGroupMembers(group))?.includes(member)) return false;
  await command("gpasswd", ["--add", operand("a user", member), "--", operand("a group", group)], { says: "The web server could not be given access to the account's files" });
  return true;
}

export async function setLoginShell(username: string, shell: string): Promise<void> {
  await command("usermod", ["--shell", shell, "--", checkedName(username)], { field: "has_ssh_access", says: "could not be applied to the account's Linux user" });
}

/** The user's supplementary groups become exactly `groups` (the panel's SFTP or shell group), and the panel's mark (PANEL_GROUP). */
export async function setSupplementaryGroups(username: string, groups: string[]): Promise<void> {
  await command("usermod", ["--groups", [PANEL_GROUP, ...groups.map((group) => operand("a group", group))].join(","), "--", checkedName(username)], {
    field: "has_ssh_access",
    says: "could not be applied to the account's Linux user",
  });
}

/** Creates a system group when there is none of that name. */
export async function ensureGroup(group: string): Promise<void> {
  if (!(await linuxGroupExists(group))) await command("groupadd", ["--system", "--", operand("a group", group)], { says: `The group ${group} could not be made` });
}

/** The group's members become exactly `usernames` (one command, whatever their number). */
export async function setGroupMembers(group: string, usernames: string[]): Promise<void> {
  await command("gpasswd", ["--members", usernames.map(checkedName).join(","), "--", operand("a group", group)], { says: `The members of the group ${group} could not be set` });
}

/**
 * The login password: hashed by chpasswd with the system's method (yescrypt on Debian 12) into
 * /etc/shadow, handed to it on standard input; null puts back `*` (keys only).
 */
export async function setLoginPassword(username: string, password: string | null): Promise<void> {
  const refusal = { field: "password", says: "could not be set on this server" };
  if (password === null) return command("usermod", ["--password", "*", "--", checkedName(username)], refusal);
  if (/[\u0000-\u001f\u007f]/.test(password)) throw new Error("a password with a control character never reaches chpasswd");
  await command("chpasswd", [], refusal, `${checkedName(username)}:${password}\n`);
}

/**
 * Suspension of logins: an expired account (expiry date 1970-01-02) is refused by sshd (and by
 * PAM, and by cron) whatever key or password it offers; an empty expiry date lifts it.
 */
export async function setLoginExpired(username: string, expired: boolean): Promise<void> {
  await command("usermod", ["--expiredate", expired ? "1" : "", "--", checkedName(username)], {
    says: `The Linux user's logins could not be ${expired ? "stopped" : "allowed again"}`,
  });
}

/**
 * Ends every process of the user (SFTP and SSH sessions among them; none running is fine), again
 * until none is left or `deadline` has passed (userdel then says which process is left).
 */
async function endUserProcesses(user: string, deadline: number): Promise<void> {
  for (;;) {
    const result = await runChild("pkill", ["--signal", "KILL", "--euid", user], { env: toolEnv(), timeoutMs: 30_000 });
    // pkill exits 1 when no process matched.
    if (result.code === 1) return;
    if (result.code !== 0) throw new Error(`pkill failed: ${exitReason(result)}`);
    if (Date.now() > deadline) return;
    await sleep(50);
  }
}

/** userdel's exit status when a process still runs as the user. */
const USERDEL_USER_BUSY = 8;

/**
 * Kills the user's processes and removes the user, again while userdel finds a process, for up to
 * 10 s. A PHP-FPM master still reloading starts the removed pool's workers again as they are
 * killed, and a worker it has forked but not yet given the user's id is invisible to pkill: it
 * takes the user's id after pkill found none, and userdel refuses the user (a termination failed
 * so in CI at dfbb544, and the test of it at 3906101; tests/unit/remove-user-respawned.test.ts).
 */
async function endProcessesAndRemoveUser(username: string): Promise<void> {
  const user = checkedName(username);
  const deadline = Date.now() + 10_000;
  for (;;) {
    await endUserProcesses(user, deadline);
    const result = await runChild("userdel", ["--", user], { env: toolEnv(), timeoutMs: 30_000 });
    if (result.code === 0) return;
    if (result.code === USERDEL_USER_BUSY && Date.now() < deadline) continue;
    console.error(`[homes] userdel -- ${user} failed: ${exitReason(result)}`);
    throw refusalError({ says: "The Linux user could not be removed" });
  }
}

/**
 * Suspend: ends the user's sessions and programs (SSH, SFTP, what they started, running cron
 * jobs) but not its PHP-FPM workers: the sites already answer 503, and a worker killed while
 * nginx's old workers finish their last requests would turn one of them into a 502.
 */
export async function endUserSessions(username: string): Promise<void> {
  const listed = await runChild("pgrep", ["--euid", checkedName(username), "--list-name"], { env: toolEnv(), timeoutMs: 30_000 });
  if (listed.code === 1) return; // none running
  if (listed.code !== 0) throw new Error(`pgrep failed: ${exitReason(listed)}`);
  for (const line of listed.stdout.trim().split("\n")) {
    const [pid, name] = line.trim().split(/\s+/);
    if (name?.startsWith("php-fpm")) continue;
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      // ended meanwhile
    }
  }
}

/**
 * userdel (after ending the user's processes: userdel refuses a user still logged in), then
 * the user's group, which userdel keeps when it has members (the web server's user); nothing
 * when they are already gone, nor when they are not the panel's (./marks.ts).
 */
export async function removeSystemUser(username: string): Promise<void> {
  if (!(await mayRemoveUser(checkedName(username)))) return;
  if (await linuxUserExists(username)) {
    await endProcessesAndRemoveUser(username);
  }
  if (await linuxGroupExists(username)) await command("groupdel", ["--", checkedName(username)], { says: "The Linux user's group could not be removed" });
}

/**
 * Creates (or repairs) the home (root's, group `owner`'s; without a Linux user the panel's) and
 * its public_html and tmp, owned by `owner` (the account's Linux user; null: the panel's own
 * user) with the web server's group. Each directory is made,
 * opened and changed through handles (./home-files.ts): public_html or tmp replaced by a link
 * → LinkInHomeError (422), and nothing outside the home is touched.
 */
export async function createHome(home: string, owner: string | null, webGroup: string): Promise<void> {
  const { uid, gid } = await ids(owner, webGroup);
  const homeOwnership = owner ? { uid: 0, gid: await groupIdOf(owner), mode: 0o750 } : { uid, gid, mode: 0o750 };
  // HOME_ROOT, when the panel makes it: each account and nginx's workers pass through it to the
  // homes their groups open.
  await makeDirectories(path.dirname(home), 0o755);
  const homes = await openTrustedDirectory(path.dirname(home));
  if (!homes) throw new Error(`no directory ${path.dirname(home)} for the homes`);
  try {
    const homeDir = await makeDirectoryIn(homes, path.basename(home), homeOwnership, { repair: true });
    try {
      for (const [name, mode] of [
        ["public_html", 0o750],
        ["tmp", 0o700],
      ] as const) {
        await (await makeDirectoryIn(homeDir, name, { uid, gid, mode }, { repair: true })).close();
      }
      await makeRunDirectory(homeDir, homeOwnership);
      // logs/ is root's like the home (the customer reads it, cannot plant links in it): the
      // files the account's own processes write are made here and given to them.
      const logs = await makeDirectoryIn(homeDir, "logs", { ...homeOwnership, mode: 0o750 }, { repair: true });
      try {
        for (const name of ACCOUNT_WRITTEN_LOGS) await makeFileIn(logs, name, { uid, gid: homeOwnership.gid, mode: 0o640 });
      } finally {
        await logs.close();
      }
    } finally {
      await homeDir.close();
    }
  } finally {
    await homes.close();
  }
}

/**
 * HOME/run/, where the account's applications listen (the proxy profile's unix sockets):
 * the home's owner's (root with Linux users), sticky and writable by all who can enter the home
 * (1777) — the account's processes and nginx's workers; no other account passes the home's 0750.
 * nginx's workers connect to a socket by path and connect() follows links, but the kernel's
 * fs.protected_symlinks (lib/provisioning/nginx.ts ensureLinkProtection) refuses them any link
 * there that the customer made: in a sticky world-writable directory a link is followed only by
 * its owner or when the directory's owner made it. So a proxied site reaches a socket the account
 * itself made in its own run/, never another account's application or a service of the server.
 */
async function makeRunDirectory(homeDir: FileHandle, homeOwnership: { uid: number; gid: number }): Promise<void> {
  await (await makeDirectoryIn(homeDir, "run", { ...homeOwnership, mode: 0o1777 }, { repair: true })).close();
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
