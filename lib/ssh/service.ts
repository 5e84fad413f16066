import { and, asc, count, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { hostingAccounts, sshKeys } from "@/db/schema";
import { assertQuota, lockAccount } from "@/lib/accounts/lock";
import { env } from "@/lib/env";
import { prepareHome } from "@/lib/provisioning/home-layout";
import { AppError, notFound, pgErrorCode, validationError } from "@/lib/errors";
import {
  endUserSessions,
  ensureGroup,
  groupIdOf,
  setGroupMembers,
  setLoginExpired,
  setLoginPassword,
  setSupplementaryGroups,
} from "@/lib/provisioning/homes";
import { linuxGroupIds, linuxUsernames } from "@/lib/provisioning/passwd";
import {
  applySshdConfig,
  keysFileUsernames,
  removeAuthorizedKeys,
  renderAuthorizedKeys,
  renderSshdConfig,
  writeAuthorizedKeys,
} from "@/lib/provisioning/openssh";
import type { SshKeyType } from "@/lib/provisioning/limits";
import { BadPublicKeyError, parsePublicKey } from "./public-key";
import type { createSshKeyBodySchema, SshKeyRecord, setPasswordBodySchema } from "./schemas";

// Customer file access (README "Files and SSH"): the account's SSH keys and login password,
// and what the account's state means for its logins. The database holds the keys; with
// SSH_SERVER=openssh each change is written to the account's keys file as the last step of its
// transaction, under the account's row lock, so the file is always the committed rows (a commit
// that fails afterwards writes the file again from what was committed).
// Without SSH_SERVER the keys are kept (written out once it is set) and a password cannot be set.

/** Keys per account: the keys file stays small, and sshd reads it at every login. */
export const MAX_SSH_KEYS = 100;

export const sshEnabled = () => env().ssh !== null;

function toRecord(row: typeof sshKeys.$inferSelect): SshKeyRecord {
  return { id: row.id, name: row.name, type: row.keyType as SshKeyType, fingerprint: row.fingerprint, created_at: row.createdAt.toISOString() };
}

/** GET /api/client/ssh-keys: `{ssh_keys: [...]}`, oldest first (an empty list is an answer, not a 404). */
export async function listSshKeys(db: Queryable, accountId: number): Promise<{ ssh_keys: SshKeyRecord[] }> {
  const rows = await db.select().from(sshKeys).where(eq(sshKeys.accountId, accountId)).orderBy(asc(sshKeys.id));
  return { ssh_keys: rows.map(toRecord) };
}

/** Writes an account's keys file: its keys, none while suspended. */
async function writeKeysFile(
  account: { username: string; suspended: boolean },
  rows: (typeof sshKeys.$inferSelect)[],
  gid: number,
): Promise<void> {
  const keys = rows.map((row) => ({ id: row.id, type: row.keyType, data: row.keyData }));
  await writeAuthorizedKeys(account.username, gid, renderAuthorizedKeys(keys, account.suspended));
}

/** Rewrites the account's keys file from the rows `db` sees (`suspended`: the state being applied). */
async function writeAccountKeys(db: Queryable, accountId: number, suspended?: boolean): Promise<void> {
  if (!sshEnabled()) return;
  const [account] = await db
    .select({ username: hostingAccounts.username, status: hostingAccounts.status })
    .from(hostingAccounts)
    .where(eq(hostingAccounts.id, accountId));
  if (!account) return;
  const rows = await db.select().from(sshKeys).where(eq(sshKeys.accountId, accountId)).orderBy(asc(sshKeys.id));
  await writeKeysFile(
    { username: account.username, suspended: suspended ?? account.status === "suspended" },
    rows,
    await groupIdOf(account.username),
  );
}

/**
 * Before a first login: a home made by an older version (the customer's own) becomes root's,
 * as sshd's chroot needs (lib/hosting/home.ts); a repaired home is left as it is.
 */
async function prepareLoginHome(db: Queryable, accountId: number): Promise<void> {
  if (!sshEnabled()) return;
  const [account] = await db.select({ username: hostingAccounts.username }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId));
  if (account) await prepareHome(account.username);
}

/** A change of keys in one transaction; when it fails, the file is written again from what is committed. */
async function changeKeys<T>(db: Database, accountId: number, change: (tx: Queryable) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(async (tx) => {
      await lockAccount(tx, accountId);
      const result = await change(tx);
      await writeAccountKeys(tx, accountId);
      return result;
    });
  } catch (error) {
    await writeAccountKeys(db, accountId).catch((rewrite) => console.error("[ssh] could not rewrite the keys file:", rewrite));
    throw error;
  }
}

/** POST /api/client/ssh-keys: a checked key; the same key twice on one account → 422. */
export async function addSshKey(
  db: Database,
  accountId: number,
  input: z.output<typeof createSshKeyBodySchema>,
): Promise<SshKeyRecord> {
  let key;
  try {
    key = parsePublicKey(input.public_key);
  } catch (error) {
    if (error instanceof BadPublicKeyError) throw validationError("public_key", error.message);
    throw error;
  }
  return changeKeys(db, accountId, async (tx) => {
    const [{ total }] = await tx.select({ total: count() }).from(sshKeys).where(eq(sshKeys.accountId, accountId));
    assertQuota(total, MAX_SSH_KEYS, "SSH keys");
    await prepareLoginHome(tx, accountId);
    try {
      const [row] = await tx
        .insert(sshKeys)
        .values({ accountId, name: input.name, keyType: key.type, keyData: key.data, fingerprint: key.fingerprint })
        .returning();
      return toRecord(row);
    } catch (error) {
      if (pgErrorCode(error) === "23505") throw validationError("public_key", `is already on this account (${key.fingerprint})`);
      throw error;
    }
  });
}

/** DELETE /api/client/ssh-keys/{id}: another account's key is "not found". */
export async function deleteSshKey(db: Database, accountId: number, id: number): Promise<{ message: string }> {
  return changeKeys(db, accountId, async (tx) => {
    const [removed] = await tx
      .delete(sshKeys)
      .where(and(eq(sshKeys.id, id), eq(sshKeys.accountId, accountId)))
      .returning({ name: sshKeys.name });
    if (!removed) throw notFound("SSH key");
    return { message: `SSH key ${removed.name} removed` };
  });
}

function assertSshEnabled(): void {
  if (!sshEnabled()) throw new AppError("VALIDATION", "SFTP and SSH are not enabled on this server (SSH_SERVER)");
}

/**
 * PUT /api/client/account/password: the Linux user's password, hashed by the system
 * (lib/provisioning/homes.ts setLoginPassword). The panel never stores, logs or echoes it.
 */
export async function setAccountPassword(
  db: Database,
  accountId: number,
  input: z.output<typeof setPasswordBodySchema> | null,
): Promise<{ message: string }> {
  assertSshEnabled();
  return db.transaction(async (tx) => {
    const [account] = await tx.select({ username: hostingAccounts.username }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId)).for("update");
    if (!account) throw notFound("Hosting account");
    await prepareLoginHome(tx, accountId);
    await setLoginPassword(account.username, input?.password ?? null);
    return { message: input ? "Password set: SFTP and SSH accept it" : "Password removed: SFTP and SSH accept keys only" };
  });
}

/** The group that decides how the account logs in: a real shell, or SFTP only in a chroot. */
const accessGroup = (hasShell: boolean) => (hasShell ? env().ssh!.shellGroup : env().ssh!.sftpGroup);

/** A new account's (or a changed SSH toggle's) way of logging in. */
export async function applyLoginAccess(username: string, hasShell: boolean): Promise<void> {
  if (sshEnabled()) await setSupplementaryGroups(username, [accessGroup(hasShell)]);
}

/**
 * Suspend: the Linux user expires (every key and password refused), the keys file is emptied and
 * running sessions end. Unsuspend: the expiry is lifted and the keys written back.
 */
export async function setAccountLoginsSuspended(db: Queryable, accountId: number, username: string, suspended: boolean): Promise<void> {
  if (!sshEnabled()) return;
  await setLoginExpired(username, suspended);
  await writeAccountKeys(db, accountId, suspended);
  if (suspended) await endUserSessions(username);
}

/** Terminate: the account's keys file goes (its user and sessions go with the system user). */
export async function removeAccountLogins(username: string): Promise<void> {
  if (sshEnabled()) await removeAuthorizedKeys(username);
}

/**
 * At start: the two groups exist and hold exactly the accounts that belong in them, every
 * account's keys file is written from the database (files of accounts that are gone are
 * removed), and the sshd drop-in is written, tested and reloaded when it changed. A drop-in sshd
 * refuses is logged; the panel starts with the previous one.
 */
export async function syncSshServer(db: Queryable): Promise<void> {
  const ssh = env().ssh;
  if (!ssh) return;
  const [accounts, keyRows, users, groupIds] = await Promise.all([
    db
      .select({ id: hostingAccounts.id, username: hostingAccounts.username, shell: hostingAccounts.hasSshAccess, status: hostingAccounts.status })
      .from(hostingAccounts)
      .orderBy(asc(hostingAccounts.username)),
    db.select().from(sshKeys).orderBy(asc(sshKeys.id)),
    linuxUsernames(),
    linuxGroupIds(),
  ]);
  // Accounts made before SYSTEM_USERS was set have no Linux user: nothing to log in as.
  const withUsers = accounts.filter((account) => users.has(account.username));
  for (const group of [ssh.sftpGroup, ssh.shellGroup]) await ensureGroup(group);
  await setGroupMembers(ssh.sftpGroup, withUsers.filter((account) => !account.shell).map((account) => account.username));
  await setGroupMembers(ssh.shellGroup, withUsers.filter((account) => account.shell).map((account) => account.username));
  for (const account of withUsers) {
    try {
      const rows = keyRows.filter((row) => row.accountId === account.id);
      await writeKeysFile({ username: account.username, suspended: account.status === "suspended" }, rows, groupIds.get(account.username)!);
    } catch (error) {
      console.error(`[ssh] the keys file of ${account.username} was not written at start:`, (error as Error).message);
    }
  }
  const known = new Set(withUsers.map((account) => account.username));
  for (const username of await keysFileUsernames()) if (!known.has(username)) await removeAuthorizedKeys(username);
  try {
    await applySshdConfig(renderSshdConfig(ssh));
  } catch (error) {
    console.error("[ssh] the sshd drop-in was not written at start:", (error as Error).message);
  }
}
