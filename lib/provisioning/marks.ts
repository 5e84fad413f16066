import fs from "node:fs/promises";
import path from "node:path";
import { env } from "@/lib/env";
import { AppError, validationError } from "@/lib/errors";
import { mysqlProvisioner } from "./mysql";
import { foreignSiteFiles } from "./nginx";
import { foreignPoolFiles } from "./php-fpm";
import { linuxGroupIds, linuxGroupMembers, linuxGroupMemberSet, linuxPasswdEntries, linuxPasswdEntry } from "./passwd";
import { runChild, toolEnv, exitReason } from "./system";

// The panel's mark on what it makes on a machine (docs/security.md "The panel adopts nothing it
// did not make"): it acts only on what carries it, on every machine (the panel's own and each
// node), and a name that exists without it is a conflict — refused, nothing changed.
//   - A Linux user is the panel's when it is a member of the group PANEL_GROUP and its primary
//     group is the group of its own name (useradd --user-group): /etc/group is root's alone, where
//     the GECOS field is partly the user's own to change (chfn), so a customer could take a mark
//     there off themselves and have the panel refuse to suspend them. The group of the account's
//     name is the panel's when it is that marked user's primary group.
//   - nginx server blocks and PHP-FPM pools: the header line the renderer writes (nginx.ts,
//     php-fpm.ts); an existing file of that name without it is a conflict.
//   - MariaDB databases and users: a row in the panel's own schema on that server (mysql.ts).

/** The group whose members are the Linux users the panel made (no account can be named with `-`). */
export const PANEL_GROUP = "hosting-panel";

/** What a Linux name is on this machine: free, the panel's, or another's (a service, an admin's own). */
export type LinuxNameOwner = "free" | "panel" | "foreign";

/** Whose the Linux user and group named `username` are on this machine. */
export async function linuxNameOwner(username: string): Promise<LinuxNameOwner> {
  const [user, groups] = await Promise.all([linuxPasswdEntry(username), linuxGroupIds()]);
  const gid = groups.get(username);
  if (!user && gid === undefined) return "free";
  if (!user || gid === undefined || user.gid !== gid) return "foreign";
  return (await linuxGroupMemberSet(PANEL_GROUP))?.has(username) ? "panel" : "foreign";
}

/** The Linux users of this machine the panel made (one read of each file). */
export async function panelUsernames(): Promise<Set<string>> {
  const [members, groups, users] = await Promise.all([linuxGroupMembers(PANEL_GROUP), linuxGroupIds(), linuxPasswdEntries()]);
  return new Set((members ?? []).filter((name) => users.has(name) && groups.get(name) === users.get(name)!.gid));
}

export const FOREIGN_USER = "exists on this server as a Linux user or group the panel did not make; the panel leaves it alone";

/** The refusal of a name that exists unmarked: 422 at `username`, in the panel's words. */
export const foreignUserError = () => validationError("username", FOREIGN_USER);

/** Throws the refusal unless the Linux user and group of `username` are the panel's (or not there at all: `allowFree`). */
export async function assertPanelUser(username: string, options: { allowFree?: boolean } = {}): Promise<LinuxNameOwner> {
  const owner = await linuxNameOwner(username);
  if (owner === "foreign" || (owner === "free" && !options.allowFree)) {
    throw owner === "foreign" ? foreignUserError() : new AppError("VALIDATION", `The account's Linux user ${username} is missing on this server`);
  }
  return owner;
}

/** Whether the panel may remove what is named `username` here: its own, or nothing there. Another's is left alone (and logged). */
export async function mayRemoveUser(username: string): Promise<boolean> {
  if ((await linuxNameOwner(username)) !== "foreign") return true;
  console.error(`[marks] ${username}: a Linux user or group the panel did not make; left alone`);
  return false;
}

/** Makes PANEL_GROUP when this machine has none yet. */
export async function ensurePanelGroup(): Promise<void> {
  if ((await linuxGroupIds()).has(PANEL_GROUP)) return;
  const result = await runChild("groupadd", ["--system", "--", PANEL_GROUP], { env: toolEnv(), timeoutMs: 30_000 });
  if (result.code !== 0) {
    console.error(`[marks] groupadd ${PANEL_GROUP} failed: ${exitReason(result)}`);
    throw new AppError("VALIDATION", `The panel's group ${PANEL_GROUP} could not be made on this server`);
  }
}

/**
 * What of an account's names exists on this machine without the panel's mark: its Linux user or
 * group, its server blocks and pools, its MariaDB databases and users (and a MariaDB server that
 * serves another node). A move's target is asked before anything is made there (lib/moves/driver.ts
 * "preparing"); a conflict is a CONFLICT naming each, and nothing is changed.
 */
export async function checkAccountNames(input: { username: string; domains: string[]; phpVersions: string[]; databases: string[]; databaseUsers: string[] }): Promise<null> {
  const conflicts: string[] = [];
  if (env().systemUsers && (await linuxNameOwner(input.username)) === "foreign") conflicts.push(`the Linux user or group ${input.username}`);
  if (env().webServer !== null) {
    for (const domain of await foreignSiteFiles(input.domains)) conflicts.push(`the nginx file of ${domain}`);
    for (const version of await foreignPoolFiles(input.username, input.phpVersions)) conflicts.push(`the PHP ${version} pool file of ${input.username}`);
  }
  const server = mysqlProvisioner();
  if (server && (input.databases.length || input.databaseUsers.length)) {
    const foreign = await server.foreignNames(input.databases, input.databaseUsers);
    for (const name of foreign.databases) conflicts.push(`the MariaDB database ${name}`);
    for (const name of foreign.users) conflicts.push(`the MariaDB user ${name}`);
  }
  if (conflicts.length) throw new AppError("CONFLICT", `This server has ${conflicts.join(", ")}, which the panel did not make; the panel leaves ${conflicts.length > 1 ? "them" : "it"} alone`);
  return null;
}

// ---- Installations from before the mark (once per machine) ----

const adoptedFlag = () => path.join(env().dataDir, "marks-adopted");

/**
 * What the panel made before it marked its work carries no mark. Once per machine — at the
 * panel's first start with marks (its `local` accounts), at a node's first reconcile (the accounts
 * the panel's database says it hosts) — the Linux users of those accounts are marked when they look
 * exactly as useradd made them for the panel: home HOME_ROOT/<username>, primary group of their own
 * name, shell bash or nologin (a service user such as redis has its home elsewhere). Then
 * DATA_DIR/marks-adopted is written and nothing is ever adopted again: from then on an unmarked
 * name is a conflict. (nginx and PHP-FPM files carried their header from the first version; the
 * MariaDB names of the same accounts are marked by `adoptDatabaseNames`, mysql.ts.)
 */
export async function adoptLegacyUsers(usernames: string[], adoptDatabases: () => Promise<void>): Promise<void> {
  if (await fs.access(adoptedFlag()).then(() => true, () => false)) return;
  if (env().systemUsers && usernames.length) {
    await ensurePanelGroup();
    const groups = await linuxGroupIds();
    const members = new Set((await linuxGroupMembers(PANEL_GROUP)) ?? []);
    const adopted: string[] = [];
    for (const username of usernames) {
      const user = await linuxPasswdEntry(username);
      if (!user || members.has(username)) continue;
      const looksMade = user.home === path.join(env().homeRoot, username) && groups.get(username) === user.gid && ["/bin/bash", "/usr/sbin/nologin"].includes(user.shell);
      if (looksMade) adopted.push(username);
      else console.error(`[marks] ${username}: a Linux user the panel's records name, but not as the panel makes them (home ${user.home}); not adopted`);
    }
    if (adopted.length) {
      const result = await runChild("gpasswd", ["--members", [...members, ...adopted].join(","), "--", PANEL_GROUP], { env: toolEnv(), timeoutMs: 30_000 });
      if (result.code !== 0) throw new Error(`gpasswd --members ${PANEL_GROUP} failed: ${exitReason(result)}`);
      console.log(`[marks] ${adopted.length} Linux user(s) made before the panel marked its users: marked`);
    }
  }
  await adoptDatabases();
  await fs.writeFile(adoptedFlag(), `${new Date().toISOString()}\n`, { mode: 0o600 });
}
