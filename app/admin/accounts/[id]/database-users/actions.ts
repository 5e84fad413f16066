"use server";

import { getAccount } from "@/lib/accounts/service";
import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { createDatabaseUserBodySchema } from "@/lib/databases/schemas";
import { assignDatabase, createDatabaseUser, deleteDatabaseUser, detachDatabase } from "@/lib/databases/service";
import { idField } from "@/lib/http/operation";
import { accountPaths } from "../paths";
import { type GrantFormInput, grantFormSchema } from "./schemas";

// Server actions of an account's Database users pages: the services of /api/client/database-users,
// with the admin session checked by runAdminFormAction. The password goes to the database server
// only; nothing of it comes back.

/** "Create user": answers the new user's id, for its page (where it is given databases). */
export async function createDatabaseUserAction(accountId: number, input: { username: string; password: string }) {
  const account = idField.parse(accountId);
  return runAdminFormAction(
    accountPaths(account).databaseUsers,
    async (db) => createDatabaseUser(db, await getAccount(db, account), createDatabaseUserBodySchema.parse(input)),
    (user) => user.id,
  );
}

/** Gives the user a database with these privileges; giving it again replaces them. */
export async function grantDatabaseAction(accountId: number, userId: number, input: GrantFormInput) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).databaseUsers, (db) => assignDatabase(db, account, idField.parse(userId), grantFormSchema.parse(input)));
}

export async function detachDatabaseAction(accountId: number, userId: number, databaseId: number) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).databaseUsers, (db) =>
    detachDatabase(db, account, idField.parse(userId), idField.parse(databaseId)),
  );
}

/** Drops the user on the database server; one still attached to a database is refused. */
export async function deleteDatabaseUserAction(accountId: number, userId: number) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).databaseUsers, (db) => deleteDatabaseUser(db, account, idField.parse(userId)));
}
