import { and, asc, count, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { hostingAccounts, nodes, sshKeys } from "@/db/schema";
import { assertQuota, lockAccount } from "@/lib/accounts/lock";
import { AppError, notFound, pgErrorCode, validationError } from "@/lib/errors";
import { NodeUnavailableError } from "@/lib/nodes/dispatch";
import { hostOfAccount } from "@/lib/nodes/hosts";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import type { SshKeyType } from "@/lib/provisioning/rules";
import { applyAllLogins, type LoginAccount, sshEnabled } from "@/lib/provisioning/logins";
import type { AuthorizedKey } from "@/lib/provisioning/openssh";
import { BadPublicKeyError, parsePublicKey } from "./public-key";
import type { createSshKeyBodySchema, SshKeyRecord, setPasswordBodySchema } from "./schemas";

// Customer file access (docs/files-and-ssh.md "Files and SSH"): the account's SSH keys and login
// password, and what the account's state means for its logins. The database holds the keys; with
// SSH_SERVER=openssh each change is written to the account's keys file as the last step of its
// transaction, under the account's row lock, so the file is always the committed rows (a commit
// that fails afterwards writes the file again from what was committed). Without SSH_SERVER the keys
// are kept (written out once it is set) and a password cannot be set.

/** Keys per account: the keys file stays small, and sshd reads it at every login. */
export const MAX_SSH_KEYS = 100;

export { sshEnabled };

function toRecord(row: typeof sshKeys.$inferSelect): SshKeyRecord {
  return { id: row.id, name: row.name, type: row.keyType as SshKeyType, fingerprint: row.fingerprint, created_at: row.createdAt.toISOString() };
}

/** GET /api/client/ssh-keys: `{ssh_keys: [...]}`, oldest first (an empty list is an answer, not a 404). */
export async function listSshKeys(db: Queryable, accountId: number): Promise<{ ssh_keys: SshKeyRecord[] }> {
  const rows = await db.select().from(sshKeys).where(eq(sshKeys.accountId, accountId)).orderBy(asc(sshKeys.id));
  return { ssh_keys: rows.map(toRecord) };
}

/** The account's keys as its keys file holds them (type and blob; the names stay in the database). */
export async function accountKeys(db: Queryable, accountId: number): Promise<AuthorizedKey[]> {
  const rows = await db.select().from(sshKeys).where(eq(sshKeys.accountId, accountId)).orderBy(asc(sshKeys.id));
  return rows.map((row) => ({ id: row.id, type: row.keyType, data: row.keyData }));
}

/** Rewrites the account's keys file on its host from the rows `db` sees. */
async function writeKeysOf(db: Queryable, accountId: number): Promise<void> {
  const [account] = await db
    .select({ username: hostingAccounts.username, status: hostingAccounts.status })
    .from(hostingAccounts)
    .where(eq(hostingAccounts.id, accountId));
  if (!account) return;
  const host = await hostOfAccount(db, accountId);
  await host.run("account.keys", { username: account.username, keys: await accountKeys(db, accountId), suspended: account.status === "suspended" });
}

/**
 * Before a first login: a home made by an older version (the customer's own) becomes root's,
 * as sshd's chroot needs (lib/provisioning/home-layout.ts); a repaired home is left as it is.
 */
async function prepareLoginHome(db: Queryable, accountId: number): Promise<void> {
  const [account] = await db.select({ username: hostingAccounts.username }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId));
  if (account) await (await hostOfAccount(db, accountId)).run("account.home", { username: account.username });
}

/** A change of keys in one transaction; when it fails, the file is written again from what is committed. */
async function changeKeys<T>(db: Database, accountId: number, change: (tx: Queryable) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(async (tx) => {
      await lockAccount(tx, accountId);
      const result = await change(tx);
      await writeKeysOf(tx, accountId);
      return result;
    });
  } catch (error) {
    if (!(error instanceof NodeUnavailableError)) {
      await writeKeysOf(db, accountId).catch((rewrite) => console.error("[ssh] could not rewrite the keys file:", rewrite));
    }
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
  return db.transaction(async (tx) => {
    const [account] = await tx.select({ username: hostingAccounts.username }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId)).for("update");
    if (!account) throw notFound("Hosting account");
    const host = await hostOfAccount(tx, accountId);
    // The panel's own machine says here whether it runs SSH; another node's agent says it in its answer.
    if (host.local) assertSshEnabled();
    await host.run("account.password", { username: account.username, password: input?.password ?? null });
    return { message: input ? "Password set: SFTP and SSH accept it" : "Password removed: SFTP and SSH accept keys only" };
  });
}

/**
 * At start: the login state of every account of the panel's own machine (`local`): the two
 * groups, every keys file, the sshd drop-in (lib/provisioning/logins.ts applyAllLogins).
 */
export async function syncSshServer(db: Queryable): Promise<void> {
  if (!sshEnabled()) return;
  await applyAllLogins(await loginAccounts(db, LOCAL_NODE));
}

/** What the SSH server of `node` needs of each account it hosts (a reconcile, lib/nodes/reconcile.ts). */
export async function loginAccounts(db: Queryable, node: string): Promise<LoginAccount[]> {
  const [accounts, keyRows] = await Promise.all([
    db
      .select({ id: hostingAccounts.id, username: hostingAccounts.username, shell: hostingAccounts.hasSshAccess, status: hostingAccounts.status })
      .from(hostingAccounts)
      .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
      .where(eq(nodes.name, node))
      .orderBy(asc(hostingAccounts.username)),
    db
      .select({ id: sshKeys.id, accountId: sshKeys.accountId, type: sshKeys.keyType, data: sshKeys.keyData })
      .from(sshKeys)
      .innerJoin(hostingAccounts, eq(hostingAccounts.id, sshKeys.accountId))
      .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
      .where(eq(nodes.name, node))
      .orderBy(asc(sshKeys.id)),
  ]);
  return accounts.map((account) => ({
    username: account.username,
    shell: account.shell,
    suspended: account.status === "suspended",
    keys: keyRows.filter((row) => row.accountId === account.id).map(({ id, type, data }) => ({ id, type, data })),
  }));
}
