import { revalidatePath } from "next/cache";
import { type Database, getDb } from "@/db/client";
import type { Actor } from "@/lib/audit/service";
import { type FormState, formError } from "./form-state";
import { requireAdminSession } from "./session";

/**
 * The body of an admin form's server action: the session is checked on the server (anyone else
 * is sent to sign in), `change` runs as that admin, a validation failure comes back as form
 * errors, and on success `listPath` is revalidated.
 */
export async function runAdminFormAction(listPath: string, change: (db: Database, actor: Actor) => Promise<unknown>): Promise<FormState> {
  const session = await requireAdminSession();
  try {
    await change(await getDb(), { type: "admin_user", id: session.adminUserId });
  } catch (error) {
    return formError(error);
  }
  revalidatePath(listPath);
  return null;
}
