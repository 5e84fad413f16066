"use server";

import type { z } from "zod";
import { ADMIN } from "@/lib/accounts/manager";
import { findAccountIdByUsername, getAccount } from "@/lib/accounts/service";
import { checkUsernameConfirmation } from "@/lib/admin-session/confirm";
import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { listUsernameRuns, restoreTerminatedAccount } from "@/lib/backups/restore-account";
import { restoreAccountBodySchema, restoreBodySchema, usernameParams, usernameRunsQuerySchema } from "@/lib/backups/schemas";
import { restoreManagedAccount, restoreSignal } from "@/lib/backups/restores";
import { requestBackup } from "@/lib/backups/service";
import { AppError } from "@/lib/errors";
import { idField } from "@/lib/http/operation";

// Server actions of the backup panels (an account's page and /admin/backups): the services of
// the API's backup routes, with the admin session checked by runAdminFormAction.

/** "Back up now": the run starts and goes on after the answer; its outcome shows in the status later. */
export async function backupNowAction(accountId: number) {
  const account = idField.parse(accountId);
  return runAdminFormAction(
    `/admin/accounts/${account}/backups`,
    async (db) => {
      const { username } = await getAccount(db, account);
      await requestBackup(db, ADMIN, account).catch((error) => {
        // The API's words point to its status operation; the admin sees the status on these pages.
        if (error instanceof AppError && error.code === "CONFLICT") {
          throw new AppError("CONFLICT", "Another backup run is using the repository (the nightly one, or one started elsewhere): try again once it has ended.");
        }
        throw error;
      });
      return username;
    },
    (username) => `A backup of ${username} has started.`,
  );
}

/** "Restore…" on the account's page: a database, a path, or public_html and every database, confirmed by typing the username. */
export async function restoreFromRunAction(accountId: number, input: z.input<typeof restoreBodySchema>, confirmation: string) {
  const account = idField.parse(accountId);
  return runAdminFormAction(
    `/admin/accounts/${account}/backups`,
    async (db) => {
      const body = restoreBodySchema.parse(input);
      checkUsernameConfirmation(confirmation, (await getAccount(db, account)).username);
      return restoreManagedAccount(db, ADMIN, account, body, restoreSignal());
    },
    (result) => result.message,
  );
}

/** "Find restore points" on /admin/backups: a username's restore points in a node's repository, of whichever account had it. */
export async function usernameRunsAction(username: string, node: string) {
  return runAdminFormAction(
    "/admin/backups",
    async (db) => listUsernameRuns(db, usernameParams.parse({ username }).username, usernameRunsQuerySchema.parse({ node }).node),
    (result) => result.snapshots,
  );
}

/** "Restore account…": a terminated account made again from a restore point, confirmed by typing its username. */
export async function restoreTerminatedAccountAction(input: { username: string; snapshot: string; node: string }, confirmation: string) {
  return runAdminFormAction(
    "/admin/backups",
    async (db, actor) => {
      const body = restoreAccountBodySchema.parse(input);
      checkUsernameConfirmation(confirmation, body.username);
      const existing = await findAccountIdByUsername(db, body.username);
      // The API's refusal names its own operation; here, the account's page is where to restore into it.
      if (existing !== null) throw new AppError("VALIDATION", `${body.username} is an account on this server: restore into it from its own page (Backups).`);
      return restoreTerminatedAccount(db, actor, body, restoreSignal());
    },
    (account) => ({ id: account.id, username: account.username, message: account.message }),
  );
}
