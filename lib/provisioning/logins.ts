import { env } from "@/lib/env";
import { installCrontab, removeCrontab, renderCrontab, type CronLine } from "./crontab";
import { homeOf, homesEnabled } from "./home-layout";
import {
  createSystemUser,
  endUserSessions,
  ensureGroup,
  groupIdOf,
  LOGIN_SHELL,
  NO_LOGIN_SHELL,
  removeHome,
  removeSystemUser,
  setGroupMembers,
  setLoginExpired,
  setLoginPassword,
  setLoginShell,
  setSupplementaryGroups,
} from "./homes";
import { removeAccountLogs } from "./goaccess";
import { type AuthorizedKey, applySshdConfig, keysFileUsernames, removeAuthorizedKeys, renderAuthorizedKeys, renderSshdConfig, writeAuthorizedKeys } from "./openssh";
import { assertPanelUser, foreignUserError, linuxNameOwner, mayRemoveUser, panelUsernames } from "./marks";
import { linuxGroupIds } from "./passwd";
import { setDiskQuota } from "./quota";

// An account's Linux user on the machine that hosts it (docs/files-and-ssh.md
// "How it is laid out, and why"; docs/nodes.md "How it works"): the
// user and its home, how it logs in (SFTP only or a shell, its keys, its password, suspended or
// not), its crontab and its disk quota — each from plain values the panel's database gave, so
// the panel's own machine and a node's agent run the same steps. Without SYSTEM_USERS there is
// no Linux user and these do nothing (SSH_SERVER needs SYSTEM_USERS). Each acts only on a user
// carrying the panel's mark (./marks.ts): another user of the account's name (a service's, an
// admin's) is refused with a 422 at `username`, and left as it is.

/** Refuses (422 at username) unless the account's Linux user is the panel's; nothing without Linux users. */
async function panelUser(username: string): Promise<void> {
  if (env().systemUsers) await assertPanelUser(username);
}

export const sshEnabled = () => env().ssh !== null;

/** The group that decides how the account logs in: a real shell, or SFTP only in a chroot. */
const accessGroup = (hasShell: boolean) => (hasShell ? env().ssh!.shellGroup : env().ssh!.sftpGroup);

/** The account's way of logging in: its login shell, and with SSH_SERVER whether it is chrooted to SFTP. */
export async function applyLoginAccess(input: { username: string; shell: boolean }): Promise<void> {
  if (!env().systemUsers) return;
  await panelUser(input.username);
  await setLoginShell(input.username, input.shell ? LOGIN_SHELL : NO_LOGIN_SHELL);
  if (sshEnabled()) await setSupplementaryGroups(input.username, [accessGroup(input.shell)]);
}

/** A new account's Linux user (its shell, its login group, its quota); false when there are no Linux users. */
export async function createAccountUser(input: { username: string; shell: boolean; diskMb: number | null }): Promise<boolean> {
  if (!env().systemUsers) return false;
  if ((await linuxNameOwner(input.username)) === "foreign") throw foreignUserError();
  await createSystemUser(input.username, homeOf(input.username), input.shell ? LOGIN_SHELL : NO_LOGIN_SHELL);
  if (sshEnabled()) await setSupplementaryGroups(input.username, [accessGroup(input.shell)]);
  await setDiskQuota(input.username, input.diskMb);
  return true;
}

/** The account's keys file: its keys, none while it is suspended. */
export async function writeAccountKeys(input: { username: string; keys: AuthorizedKey[]; suspended: boolean }): Promise<void> {
  if (!sshEnabled()) return;
  await panelUser(input.username);
  await writeAuthorizedKeys(input.username, await groupIdOf(input.username), renderAuthorizedKeys(input.keys, input.suspended));
}

/** The login password (hashed by the system, never stored by the panel); null: keys only. */
export async function setAccountPassword(input: { username: string; password: string | null }): Promise<void> {
  await panelUser(input.username);
  await setLoginPassword(input.username, input.password);
}

/**
 * Suspend: the Linux user expires (every key and password refused), the keys file is emptied and
 * running sessions end. Unsuspend: the expiry is lifted and the keys written back.
 */
export async function setLoginsSuspended(input: { username: string; keys: AuthorizedKey[]; suspended: boolean }): Promise<void> {
  if (!sshEnabled()) return;
  await panelUser(input.username);
  await setLoginExpired(input.username, input.suspended);
  await writeAccountKeys(input);
  if (input.suspended) await endUserSessions(input.username);
}

/** Installs the account's crontab: its enabled jobs, none while it is suspended. */
export async function installAccountCrontab(input: { username: string; jobs: CronLine[]; suspended: boolean }): Promise<void> {
  if (!env().systemUsers) return;
  await panelUser(input.username);
  const jobs = input.suspended ? [] : input.jobs;
  await installCrontab(input.username, renderCrontab(homeOf(input.username), jobs), jobs.length);
}

/** The plan's disk_mb as the account's quota (where HOME_ROOT's file system has quotas). */
export async function setAccountQuota(input: { username: string; diskMb: number | null }): Promise<void> {
  if (!env().systemUsers) return;
  await panelUser(input.username);
  await setDiskQuota(input.username, input.diskMb);
}

/** Termination: the keys file goes (the user and its sessions go with the home). */
export async function removeAccountLogins(input: { username: string }): Promise<void> {
  if (sshEnabled()) await removeAuthorizedKeys(input.username);
}

/**
 * Termination: the crontab goes. A removal run again after its Linux user went (a retried
 * termination or move cleaning) has nothing left to do: the crontab went before the user did
 * (removeAccountHome comes after this), and crontab refuses a user it does not know.
 */
export async function removeAccountCrontab(input: { username: string }): Promise<void> {
  if (!env().systemUsers || (await linuxNameOwner(input.username)) === "free") return;
  if (await mayRemoveUser(input.username)) await removeCrontab(input.username);
}

/**
 * Termination, last steps: the Linux user, the home with every file of the account, and its
 * access logs and visitor statistics (a new account of the same name must see none of them).
 */
export async function removeAccountHome(input: { username: string }): Promise<void> {
  // Another's user of that name keeps its user, group and whatever HOME_ROOT/<name> holds.
  const ours = !env().systemUsers || (await mayRemoveUser(input.username));
  if (env().systemUsers && ours) await removeSystemUser(input.username);
  if (homesEnabled() && ours) await removeHome(homeOf(input.username));
  if (ours) await removeAccountLogs(input.username);
}

/** What the SSH server needs to know of one account this machine hosts. */
export interface LoginAccount {
  username: string;
  shell: boolean;
  suspended: boolean;
  keys: AuthorizedKey[];
}

/**
 * Every account's login state on this machine (at start, and a node's reconcile): the two
 * groups hold exactly the accounts that belong in them, each keys file is written (files of
 * accounts no longer hosted here removed), and the sshd drop-in is written, tested and reloaded
 * when it changed. A drop-in sshd refuses is logged; the previous one stays.
 */
export async function applyAllLogins(accounts: LoginAccount[]): Promise<void> {
  const ssh = env().ssh;
  if (!ssh) return;
  // Only the panel's users: another's of an account's name gets no keys file and no login group.
  const [users, groupIds] = await Promise.all([panelUsernames(), linuxGroupIds()]);
  const withUsers = accounts.filter((account) => users.has(account.username));
  for (const group of [ssh.sftpGroup, ssh.shellGroup]) await ensureGroup(group);
  await setGroupMembers(ssh.sftpGroup, withUsers.filter((account) => !account.shell).map((account) => account.username));
  await setGroupMembers(ssh.shellGroup, withUsers.filter((account) => account.shell).map((account) => account.username));
  for (const account of withUsers) {
    try {
      await writeAuthorizedKeys(account.username, groupIds.get(account.username)!, renderAuthorizedKeys(account.keys, account.suspended));
    } catch (error) {
      console.error(`[ssh] the keys file of ${account.username} was not written:`, (error as Error).message);
    }
  }
  const known = new Set(withUsers.map((account) => account.username));
  for (const username of await keysFileUsernames()) if (!known.has(username)) await removeAuthorizedKeys(username);
  try {
    await applySshdConfig(renderSshdConfig(ssh));
  } catch (error) {
    console.error("[ssh] the sshd drop-in was not written:", (error as Error).message);
  }
}
