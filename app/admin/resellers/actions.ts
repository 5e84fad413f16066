"use server";

import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { idField } from "@/lib/http/operation";
import type { ResellerInput } from "@/lib/resellers/schemas";
import { createReseller, updateReseller } from "@/lib/resellers/service";

// Server actions of the reseller pages; the services parse the input with the same schema.

export async function createResellerAction(input: ResellerInput) {
  return runAdminFormAction("/admin/resellers", (db, actor) => createReseller(db, input, actor));
}

export async function updateResellerAction(id: number, input: ResellerInput) {
  return runAdminFormAction("/admin/resellers", (db, actor) => updateReseller(db, idField.parse(id), input, actor));
}
