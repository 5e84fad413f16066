"use server";

import { accountAdminFieldsSchema, type AccountAdminFieldsInput, type CreateAccountInput } from "@/lib/accounts/schemas";
import { createAccount, updateAccountAdminFields } from "@/lib/accounts/service";
import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { idField } from "@/lib/http/operation";

// Server actions of the hosting account pages; the services parse the input with the same schemas.

export async function createAccountAction(input: CreateAccountInput) {
  return runAdminFormAction("/admin/accounts", (db, actor) => createAccount(db, input, actor));
}

/** Edit sends every admin field; the service also accepts a part of them. */
export async function updateAccountAction(id: number, input: AccountAdminFieldsInput) {
  return runAdminFormAction("/admin/accounts", (db, actor) =>
    updateAccountAdminFields(db, idField.parse(id), accountAdminFieldsSchema.parse(input), actor),
  );
}
