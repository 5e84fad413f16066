import { and, asc, count, eq, inArray, ne, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { preparedQuery } from "@/db/prepared";
import { customerDatabases, databaseGrants, databaseUsers, hostingAccounts } from "@/db/schema";
import { assertQuota, lockAccount } from "@/lib/accounts/lock";
import { AppError, notFound, pgErrorCode, validationError } from "@/lib/errors";
import { databaseServerOf } from "@/lib/nodes/hosts";
import type {
  assignDatabaseBodySchema,
  createDatabaseBodySchema,
  createDatabaseUserBodySchema,
  databaseRecordSchema,
  databaseUserRecordSchema,
  Privilege,
} from "./schemas";

// Customer databases, database users and the grants linking them, always inside one account.
// With MYSQL_PROVISION_URL each change also runs on the database server, as the last step of
// the record's transaction: a server failure rolls the record back, and a create whose commit
// fails afterwards is undone on the server, so records and server never diverge.
// Server-side names carry the account's prefix `<username>_` (added when the caller leaves it
// out, as cPanel does). Quotas come from the account's plan and are counted under a lock on the
// account row, so concurrent creates cannot overshoot.

export type DatabaseRecord = z.infer<typeof databaseRecordSchema>;
export type DatabaseUserRecord = z.infer<typeof databaseUserRecordSchema>;

interface AccountScope {
  id: number;
  username: string;
}

export const MAX_DATABASE_NAME = 64;
export const MAX_DATABASE_USER_NAME = 50;

/**
 * A name belongs to the account with the longest `<username>_` prefix it starts with: account `a`
 * must not make `a_b_x`, which lies in the `a_b_` of account `a_b` (whose grants, backups and
 * termination go by that prefix), while `a_b` may (`a_` is shorter than its own). New usernames
 * hold no `_` (lib/accounts/schemas.ts), so only accounts made before that rule can hold a longer
 * prefix inside another's: their set never grows, and this read inside the creating transaction
 * cannot be overtaken by a new one. Names already made stay as they are (a live MariaDB database
 * is never renamed).
 */
async function assertOutsideOtherPrefixes(tx: Queryable, account: AccountScope, name: string, field: string) {
  const [other] = await tx
    .select({ id: hostingAccounts.id })
    .from(hostingAccounts)
    .where(
      and(
        ne(hostingAccounts.id, account.id),
        sql`length(${hostingAccounts.username}) > ${account.username.length}`,
        sql`left(${name}, length(${hostingAccounts.username}) + 1) = ${hostingAccounts.username} || '_'`,
      ),
    )
    .limit(1);
  if (other) throw validationError(field, `"${name}" lies inside the prefix of another account: choose another name`);
}

/** `shop` → `alice_shop`; `alice_shop` stays. Checks the full name's length. */
export function prefixedName(account: AccountScope, name: string, field: string, max: number): string {
  const prefix = `${account.username}_`;
  const full = name.startsWith(prefix) ? name : `${prefix}${name}`;
  if (full === prefix) throw validationError(field, "needs a name after the prefix");
  if (full.length > max) {
    throw validationError(field, `is too long: at most ${max} characters including the prefix "${prefix}"`);
  }
  return full;
}

async function grantsOf(db: Queryable, where: ReturnType<typeof inArray>) {
  return db
    .select({
      databaseId: databaseGrants.databaseId,
      databaseName: customerDatabases.databaseName,
      userId: databaseGrants.databaseUserId,
      username: databaseUsers.username,
      privileges: databaseGrants.privileges,
    })
    .from(databaseGrants)
    .innerJoin(customerDatabases, eq(customerDatabases.id, databaseGrants.databaseId))
    .innerJoin(databaseUsers, eq(databaseUsers.id, databaseGrants.databaseUserId))
    .where(where)
    .orderBy(asc(databaseGrants.databaseId), asc(databaseGrants.databaseUserId));
}

// ---- databases ----

/** Real sizes of the account's databases when provisioning is on; null (unknown) when it is off or the server is down. */
export async function databaseSizesMb(db: Queryable, accountId: number, names: string[]): Promise<Map<string, number> | null> {
  const server = await databaseServerOf(db, accountId).catch(() => null);
  if (!server) return null;
  return server.databaseSizesMb(names).catch((error) => {
    console.error("[databases] sizes unavailable:", (error as Error).message);
    return null;
  });
}

async function toDatabaseRecords(db: Queryable, rows: (typeof customerDatabases.$inferSelect)[]): Promise<DatabaseRecord[]> {
  if (rows.length === 0) return [];
  const sizesMb = await databaseSizesMb(db, rows[0].accountId, rows.map((row) => row.databaseName));
  const grants = await grantsOf(db, inArray(databaseGrants.databaseId, rows.map((row) => row.id)));
  return rows.map((row) => ({
    id: row.id,
    database_name: row.databaseName,
    size_mb: sizesMb?.get(row.databaseName) ?? null,
    users: grants
      .filter((grant) => grant.databaseId === row.id)
      .map((grant) => ({ id: grant.userId, username: grant.username, privileges: grant.privileges })),
    created_at: row.createdAt.toISOString(),
  }));
}

const accountDatabases = preparedQuery((db) =>
  db
    .select()
    .from(customerDatabases)
    .where(eq(customerDatabases.accountId, sql.placeholder("accountId")))
    .orderBy(asc(customerDatabases.id))
    .prepare("account_databases"),
);

/** GET /api/client/databases: 404 when the account has none (SPEC.md). */
export async function listDatabases(db: Queryable, accountId: number) {
  const rows = await accountDatabases(db).execute({ accountId });
  if (rows.length === 0) throw new AppError("NOT_FOUND", "No databases found");
  return toDatabaseRecords(db, rows);
}

async function findDatabaseRow(db: Queryable, { accountId, id }: { accountId: number; id: number }) {
  const [row] = await db
    .select()
    .from(customerDatabases)
    .where(and(eq(customerDatabases.accountId, accountId), eq(customerDatabases.id, id)));
  if (!row) throw notFound("Database");
  return row;
}

/** One of the account's databases; another account's is "not found". */
export async function getDatabaseOrThrow(db: Queryable, scope: { accountId: number; id: number }) {
  const [record] = await toDatabaseRecords(db, [await findDatabaseRow(db, scope)]);
  return record;
}

export async function createDatabase(
  db: Database,
  account: AccountScope,
  input: z.output<typeof createDatabaseBodySchema>,
): Promise<DatabaseRecord> {
  const name = prefixedName(account, input.database_name, "database_name", MAX_DATABASE_NAME);
  const server = await databaseServerOf(db, account.id);
  let createdOnServer = false;
  const id = await db
    .transaction(async (tx) => {
    const { plan } = await lockAccount(tx, account.id);
    if (plan.maxDatabases !== null) {
      const [{ total }] = await tx
        .select({ total: count() })
        .from(customerDatabases)
        .where(eq(customerDatabases.accountId, account.id));
      assertQuota(total, plan.maxDatabases, "databases");
    }
    await assertOutsideOtherPrefixes(tx, account, name, "database_name");
    try {
      const [row] = await tx
        .insert(customerDatabases)
        .values({ accountId: account.id, databaseName: name })
        .returning({ id: customerDatabases.id });
      if (server) {
        await server.createDatabase(name);
        createdOnServer = true;
      }
      return row.id;
    } catch (error) {
      if (pgErrorCode(error) === "23505") throw validationError("database_name", `"${name}" already exists`);
      throw error;
    }
    })
    .catch(async (error) => {
      if (createdOnServer) await undoOnServer(() => server!.dropDatabase(name));
      throw error;
    });
  return getDatabaseOrThrow(db, { accountId: account.id, id });
}

export async function deleteDatabase(db: Database, accountId: number, id: number): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await findDatabaseRow(tx, { accountId, id });
    const [{ total }] = await tx.select({ total: count() }).from(databaseGrants).where(eq(databaseGrants.databaseId, id));
    if (total > 0) {
      throw new AppError("CONFLICT", `Database ${row.databaseName} still has users assigned: detach them first`);
    }
    await tx.delete(customerDatabases).where(eq(customerDatabases.id, id));
    await (await databaseServerOf(tx, accountId))?.dropDatabase(row.databaseName);
  });
}

// ---- database users ----

async function toUserRecords(db: Queryable, rows: (typeof databaseUsers.$inferSelect)[]): Promise<DatabaseUserRecord[]> {
  if (rows.length === 0) return [];
  const grants = await grantsOf(db, inArray(databaseGrants.databaseUserId, rows.map((row) => row.id)));
  return rows.map((row) => ({
    id: row.id,
    username: row.username,
    databases: grants
      .filter((grant) => grant.userId === row.id)
      .map((grant) => ({ id: grant.databaseId, database_name: grant.databaseName, privileges: grant.privileges })),
    created_at: row.createdAt.toISOString(),
  }));
}

const accountDatabaseUsers = preparedQuery((db) =>
  db
    .select()
    .from(databaseUsers)
    .where(eq(databaseUsers.accountId, sql.placeholder("accountId")))
    .orderBy(asc(databaseUsers.id))
    .prepare("account_database_users"),
);

/** GET /api/client/database-users: 404 when the account has none (SPEC.md). */
export async function listDatabaseUsers(db: Queryable, accountId: number) {
  const rows = await accountDatabaseUsers(db).execute({ accountId });
  if (rows.length === 0) throw new AppError("NOT_FOUND", "No database users found");
  return toUserRecords(db, rows);
}

async function findUserRow(db: Queryable, { accountId, id }: { accountId: number; id: number }) {
  const [row] = await db
    .select()
    .from(databaseUsers)
    .where(and(eq(databaseUsers.accountId, accountId), eq(databaseUsers.id, id)));
  if (!row) throw notFound("Database user");
  return row;
}

export async function getDatabaseUserOrThrow(db: Queryable, scope: { accountId: number; id: number }) {
  const [record] = await toUserRecords(db, [await findUserRow(db, scope)]);
  return record;
}

/** Creates a user; the password goes to the database server only and is never stored here. */
export async function createDatabaseUser(
  db: Database,
  account: AccountScope,
  input: z.output<typeof createDatabaseUserBodySchema>,
): Promise<DatabaseUserRecord> {
  const name = prefixedName(account, input.username, "username", MAX_DATABASE_USER_NAME);
  const server = await databaseServerOf(db, account.id);
  let createdOnServer = false;
  const id = await db
    .transaction(async (tx) => {
    const { status, plan } = await lockAccount(tx, account.id);
    if (plan.maxDatabaseUsers !== null) {
      const [{ total }] = await tx
        .select({ total: count() })
        .from(databaseUsers)
        .where(eq(databaseUsers.accountId, account.id));
      assertQuota(total, plan.maxDatabaseUsers, "database users");
    }
    await assertOutsideOtherPrefixes(tx, account, name, "username");
    try {
      const [row] = await tx
        .insert(databaseUsers)
        .values({ accountId: account.id, username: name })
        .returning({ id: databaseUsers.id });
      if (server) {
        // A suspended account's users are locked (lib/accounts/lifecycle.ts): a new one from the start.
        await server.createUser(name, input.password, { locked: status === "suspended" });
        createdOnServer = true;
      }
      return row.id;
    } catch (error) {
      if (pgErrorCode(error) === "23505") throw validationError("username", `"${name}" already exists`);
      throw error;
    }
    })
    .catch(async (error) => {
      if (createdOnServer) await undoOnServer(() => server!.dropUser(name));
      throw error;
    });
  return getDatabaseUserOrThrow(db, { accountId: account.id, id });
}

export async function deleteDatabaseUser(db: Database, accountId: number, id: number): Promise<void> {
  await db.transaction(async (tx) => {
    const row = await findUserRow(tx, { accountId, id });
    const [{ total }] = await tx
      .select({ total: count() })
      .from(databaseGrants)
      .where(eq(databaseGrants.databaseUserId, id));
    if (total > 0) {
      throw new AppError("CONFLICT", `Database user ${row.username} still has databases attached: detach them first`);
    }
    await tx.delete(databaseUsers).where(eq(databaseUsers.id, id));
    await (await databaseServerOf(tx, accountId))?.dropUser(row.username);
  });
}

/** "ALL PRIVILEGES" stands alone; otherwise the listed privileges, deduplicated, in list order. */
function normalizePrivileges(privileges: Privilege[] | undefined): string[] {
  if (!privileges || privileges.includes("ALL PRIVILEGES")) return ["ALL PRIVILEGES"];
  return [...new Set(privileges)].sort();
}

/** Links a user to a database with privileges; linking again replaces them. */
export async function assignDatabase(
  db: Database,
  accountId: number,
  userId: number,
  input: z.output<typeof assignDatabaseBodySchema>,
): Promise<{ message: string }> {
  const privileges = normalizePrivileges(input.privileges);
  return db.transaction(async (tx) => {
    const user = await findUserRow(tx, { accountId, id: userId });
    const database = await findDatabaseRow(tx, { accountId, id: input.database_id });
    const [existing] = await tx
      .select({ privileges: databaseGrants.privileges })
      .from(databaseGrants)
      .where(and(eq(databaseGrants.databaseUserId, userId), eq(databaseGrants.databaseId, input.database_id)))
      .for("update");
    if (existing) {
      await tx
        .update(databaseGrants)
        .set({ privileges })
        .where(and(eq(databaseGrants.databaseUserId, userId), eq(databaseGrants.databaseId, input.database_id)));
    } else {
      await tx.insert(databaseGrants).values({ databaseUserId: userId, databaseId: input.database_id, privileges });
    }
    await (await databaseServerOf(tx, accountId))?.grant(user.username, database.databaseName, privileges);
    return { message: existing ? "Privileges updated" : "Database assigned" };
  });
}

/** Unlinks (revokes); neither record is deleted. Not linked → 404. */
export async function detachDatabase(
  db: Database,
  accountId: number,
  userId: number,
  databaseId: number,
): Promise<{ message: string }> {
  return db.transaction(async (tx) => {
    const user = await findUserRow(tx, { accountId, id: userId });
    const database = await findDatabaseRow(tx, { accountId, id: databaseId });
    const removed = await tx
      .delete(databaseGrants)
      .where(and(eq(databaseGrants.databaseUserId, userId), eq(databaseGrants.databaseId, databaseId)))
      .returning({ databaseId: databaseGrants.databaseId });
    if (removed.length === 0) {
      throw new AppError("NOT_FOUND", `Database user ${user.username} is not linked to ${database.databaseName}`);
    }
    await (await databaseServerOf(tx, accountId))?.revoke(user.username, database.databaseName);
    return { message: `Database user ${user.username} detached from ${database.databaseName}` };
  });
}

/** Reverts a server-side create whose record did not commit; a failure here is logged. */
async function undoOnServer(undo: () => Promise<void>) {
  await undo().catch((error) => console.error("[databases] could not undo a server-side create:", (error as Error).message));
}
