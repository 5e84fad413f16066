"use server";

import { revalidatePath } from "next/cache";
import { getDb } from "@/db/client";
import { accountAdminFieldsSchema, type AccountAdminFieldsInput, type CreateAccountInput } from "@/lib/accounts/schemas";
import { createAccount, updateAccountAdminFields } from "@/lib/accounts/service";
import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { requireAdminSession } from "@/lib/admin-session/session";
import { requestAutoSslCheck } from "@/lib/autossl/job";
import { requestRenewal } from "@/lib/autossl/service";
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

/** "Renew now" on the account's page: the AutoSSL job issues the domain's certificate again. */
export async function renewCertificateAction(accountId: number, domainId: number): Promise<void> {
  const session = await requireAdminSession();
  const account = idField.parse(accountId);
  await requestRenewal(await getDb(), account, idField.parse(domainId), { type: "admin_user", id: session.adminUserId });
  requestAutoSslCheck();
  revalidatePath(`/admin/accounts/${account}/edit`);
}
