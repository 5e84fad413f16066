"use server";

import type { z } from "zod";
import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { requireAdminSession } from "@/lib/admin-session/session";
import type { FormState } from "@/lib/admin-session/form-state";
import { createAliasBodySchema, createMailboxBodySchema, createMailDomainBodySchema, updateMailboxBodySchema } from "@/lib/email/schemas";
import { createAlias, createMailbox, createMailDomain, deleteAlias, deleteMailbox, rotateDkimKey, updateMailbox } from "@/lib/email/service";
import { unflagAccountMail } from "@/lib/email/sending";
import { idField } from "@/lib/http/operation";
import { accountPaths } from "../paths";

// Server actions of an account's Email tab: the services of /api/client/email, with the admin
// session checked by runAdminFormAction. Each change applies the account's mail on its machine
// before it answers (lib/email/service.ts).

/**
 * The plan's count of mailboxes is refused at `quota`, which is no field of the form: said above
 * it as the service says it ("Quota reached: the plan allows 2 mailboxes").
 */
function planLimitAsMessage<Result>(result: Result): Result {
  const state = result as FormState;
  if (!state?.fieldErrors?.quota) return result;
  const { quota: _, ...rest } = state.fieldErrors;
  return { error: state.error, fieldErrors: Object.keys(rest).length ? rest : undefined } as Result;
}

export async function createMailDomainAction(accountId: number, input: z.input<typeof createMailDomainBodySchema>) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).email, (db) => createMailDomain(db, account, createMailDomainBodySchema.parse(input)));
}

/** A new DKIM key, published before it signs; the old one stays published 7 days (docs/email.md "DKIM"). */
export async function rotateDkimKeyAction(accountId: number, mailDomainId: number) {
  const account = idField.parse(accountId);
  return runAdminFormAction(
    accountPaths(account).email,
    (db) => rotateDkimKey(db, account, idField.parse(mailDomainId)),
    (mailDomain) => mailDomain.dkim.selector,
  );
}

/** The flag its sending limits raised, lifted (audited); its counts stay (docs/email.md "Sending limits"). */
export async function unflagMailAction(accountId: number) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).email, (db, actor) => unflagAccountMail(db, account, actor));
}

export async function createMailboxAction(accountId: number, input: z.input<typeof createMailboxBodySchema>) {
  // Checked here too: the answer is reshaped after runAdminFormAction (which checks it again).
  await requireAdminSession();
  const account = idField.parse(accountId);
  return planLimitAsMessage(await runAdminFormAction(accountPaths(account).email, (db) => createMailbox(db, account, createMailboxBodySchema.parse(input))));
}

export async function updateMailboxAction(accountId: number, mailboxId: number, input: z.input<typeof updateMailboxBodySchema>) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).email, (db) => updateMailbox(db, account, idField.parse(mailboxId), updateMailboxBodySchema.parse(input)));
}

/** Removes the mailbox from the mail servers; its maildir stays in the home (the customer's data). */
export async function deleteMailboxAction(accountId: number, mailboxId: number) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).email, (db) => deleteMailbox(db, account, idField.parse(mailboxId)));
}

export async function createAliasAction(accountId: number, input: z.input<typeof createAliasBodySchema>) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).email, (db) => createAlias(db, account, createAliasBodySchema.parse(input)));
}

export async function deleteAliasAction(accountId: number, aliasId: number) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).email, (db) => deleteAlias(db, account, idField.parse(aliasId)));
}
