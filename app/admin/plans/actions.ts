"use server";

import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { idField } from "@/lib/http/operation";
import type { CreatePlanInput } from "@/lib/plans/schemas";
import { createPlan, updatePlan } from "@/lib/plans/service";

// Server actions of the plan pages; the services parse the input with the same schemas.

export async function createPlanAction(input: CreatePlanInput) {
  return runAdminFormAction("/admin/plans", (db, actor) => createPlan(db, input, actor));
}

export async function updatePlanAction(id: number, input: CreatePlanInput) {
  return runAdminFormAction("/admin/plans", (db, actor) => updatePlan(db, idField.parse(id), input, actor));
}
