"use server";

import { redirect } from "next/navigation";
import { getDb } from "@/db/client";
import { completeAdminSetup } from "@/lib/admins/setup";
import { formError, type FormState } from "@/lib/admin-session/form-state";

export async function createFirstAdmin(token: string, _state: FormState, form: FormData): Promise<FormState> {
  try {
    await completeAdminSetup(await getDb(), token, {
      email: String(form.get("email") ?? ""),
      name: String(form.get("name") ?? ""),
      password: String(form.get("password") ?? ""),
    });
  } catch (error) {
    return formError(error);
  }
  redirect("/login");
}
