import { validationError } from "@/lib/errors";

/**
 * A destructive action's confirmation, checked by its server action (not only in the browser):
 * the admin must have typed the account's username, else an error at the `confirmation` field.
 */
export function checkUsernameConfirmation(confirmation: string, username: string): void {
  if (confirmation.trim().toLowerCase() !== username) {
    throw validationError("confirmation", `Not the account's username: type ${username}`);
  }
}
