import { revalidatePath } from "next/cache";
import type { Database } from "@/db/client";
import type { Actor } from "@/lib/audit/service";
import { type FormState, formError } from "./form-state";
import { requireAdminSession } from "./session";

/**
 * The body of an admin form's server action: the session is checked on the server (anyone else
 * is sent to sign in), `change` runs as that admin, a validation failure comes back as form
 * errors, and on success `listPath` is revalidated. The answer to a success is null, or
 * `{ saved }` when `reply` picks what the form shows next (a new key's secret): nothing else of
 * the change's result reaches the browser.
 */
export async function runAdminFormAction<Result, Reply = never>(
  listPath: string,
  change: (db: Database, actor: Extract<Actor, { type: "admin_user" }>) => Promise<Result>,
  reply?: (result: Result) => Reply,
): Promise<FormState | { saved: Reply }> {
  const { admin, db } = await requireAdminSession();
  let result: Result;
  try {
    result = await change(db, { type: "admin_user", id: admin.adminUserId });
  } catch (error) {
    return formError(error);
  }
  revalidatePath(listPath);
  return reply ? { saved: reply(result) } : null;
}
