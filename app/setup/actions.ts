"use server";

import { getDb } from "@/db/client";
import { formError, type FormState } from "@/lib/admin-session/form-state";
import type { CreateAdminInput } from "@/lib/admins/schemas";
import { completeAdminSetup } from "@/lib/admins/setup";

// The set-up page's action: no session yet, the one-time token is the credential.
export async function createFirstAdmin(token: string, input: CreateAdminInput): Promise<FormState> {
  try {
    await completeAdminSetup(await getDb(), token, input);
  } catch (error) {
    return formError(error);
  }
  return null;
}
