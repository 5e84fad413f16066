"use server";

import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { createDatabaseBodySchema } from "@/lib/databases/schemas";
import { createDatabase, deleteDatabase } from "@/lib/databases/service";
import { getAccount } from "@/lib/accounts/service";
import { idField } from "@/lib/http/operation";
import { accountPaths } from "../paths";

// Server actions of an account's Databases pages: the services of /api/client/databases, with the
// admin session checked by runAdminFormAction.

export async function createDatabaseAction(accountId: number, input: { database_name: string }) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).databases, async (db) =>
    createDatabase(db, await getAccount(db, account), createDatabaseBodySchema.parse(input)),
  );
}

/** Deletes the database and its tables on the database server; one with users still attached is refused. */
export async function deleteDatabaseAction(accountId: number, databaseId: number) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).databases, (db) => deleteDatabase(db, account, idField.parse(databaseId)));
}
