"use server";

import { revalidatePath } from "next/cache";
import { suspendAccount, terminateAccount, unsuspendAccount } from "@/lib/accounts/lifecycle";
import { ADMIN } from "@/lib/accounts/manager";
import {
  accountAdminFieldsSchema,
  type AccountAdminFieldsInput,
  type CreateAccountInput,
} from "@/lib/accounts/schemas";
import { createAccount, getAccount, updateAccountAdminFields } from "@/lib/accounts/service";
import { checkUsernameConfirmation } from "@/lib/admin-session/confirm";
import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { requireAdminSession } from "@/lib/admin-session/session";
import { requestAutoSslCheck } from "@/lib/autossl/job";
import { requestRenewal } from "@/lib/autossl/service";
import { bodyOf, isAccepted } from "@/lib/http/accepted";
import { idField } from "@/lib/http/operation";
import { startMoveSchema } from "@/lib/moves/schemas";
import { cancelMove, startMove } from "@/lib/moves/service";
import { updatePhpSettingsSchema } from "@/lib/php-settings/schemas";
import { updatePhpSettings } from "@/lib/php-settings/service";
import { createSshKeyBodySchema } from "@/lib/ssh/schemas";
import { addSshKey, deleteSshKey } from "@/lib/ssh/service";

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

/**
 * What the page says after a suspension or unsuspension: nothing when it is done, or that it waits
 * for the account's node, which did not answer (the change is recorded and applied when it is back).
 */
const waitingFor = (change: string) => (outcome: Awaited<ReturnType<typeof suspendAccount>>) =>
  isAccepted(outcome) ? `The ${change} is recorded and will be applied when the node ${bodyOf(outcome).node} is back.` : null;

export async function suspendAccountAction(id: number, reason: string) {
  return runAdminFormAction(
    "/admin/accounts",
    (db, actor) => suspendAccount(db, ADMIN, idField.parse(id), reason, actor),
    waitingFor("suspension"),
  );
}

export async function unsuspendAccountAction(id: number) {
  return runAdminFormAction("/admin/accounts", (db, actor) => unsuspendAccount(db, ADMIN, idField.parse(id), actor), waitingFor("unsuspension"));
}

/**
 * Terminate, confirmed by typing the account's username (checked here, not only in the browser).
 * `gone`: false when its node did not answer: the account is suspended and terminated once the node is back.
 */
export async function terminateAccountAction(id: number, confirmation: string) {
  return runAdminFormAction(
    "/admin/accounts",
    async (db, actor) => {
      const account = await getAccount(db, idField.parse(id));
      checkUsernameConfirmation(confirmation, account.username);
      return terminateAccount(db, ADMIN, account.id, actor);
    },
    (outcome) => ({ gone: !isAccepted(outcome), message: bodyOf(outcome).message }),
  );
}

/** "Renew now" on the account's page: the AutoSSL job issues the domain's certificate again. */
export async function renewCertificateAction(accountId: number, domainId: number): Promise<void> {
  const { admin, db } = await requireAdminSession();
  const account = idField.parse(accountId);
  await requestRenewal(db, account, idField.parse(domainId), { type: "admin_user", id: admin.adminUserId });
  requestAutoSslCheck();
  revalidatePath(`/admin/accounts/${account}/certificates`);
}

/** "Add key" on the account's page: the same check as POST /api/client/ssh-keys. */
export async function addSshKeyAction(accountId: number, input: { name: string; public_key: string }) {
  const account = idField.parse(accountId);
  return runAdminFormAction(`/admin/accounts/${account}/files-ssh`, (db) => addSshKey(db, account, createSshKeyBodySchema.parse(input)));
}

export async function deleteSshKeyAction(accountId: number, keyId: number) {
  const account = idField.parse(accountId);
  return runAdminFormAction(`/admin/accounts/${account}/files-ssh`, (db) => deleteSshKey(db, account, idField.parse(keyId)));
}

/** "Save PHP settings" on the account's page: the same checks as PUT /api/client/php-settings. */
export async function updatePhpSettingsAction(accountId: number, input: unknown) {
  const account = idField.parse(accountId);
  return runAdminFormAction(`/admin/accounts/${account}/php`, (db) => updatePhpSettings(db, account, updatePhpSettingsSchema.parse(input)));
}

/** Moves the account to another node (docs/nodes.md "Moving accounts"): queued, the panel's server does it. */
export async function moveAccountAction(id: number, node: string) {
  return runAdminFormAction("/admin/accounts", (db, actor) => startMove(db, idField.parse(id), startMoveSchema.parse({ node }), actor));
}

/** Cancels the account's move, before its switch. */
export async function cancelMoveAction(id: number) {
  return runAdminFormAction("/admin/accounts", (db, actor) => cancelMove(db, idField.parse(id), actor));
}
