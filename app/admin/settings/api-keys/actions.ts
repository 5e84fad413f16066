"use server";

import { revalidatePath } from "next/cache";
import { getDb } from "@/db/client";
import { type FormState, formError } from "@/lib/admin-session/form-state";
import { requireAdminSession } from "@/lib/admin-session/session";
import { createApiKeySchema, type CreateApiKeyInput, updateApiKeySchema, type UpdateApiKeyInput } from "@/lib/api-keys/schemas";
import { createApiKey, deleteApiKey, updateApiKey } from "@/lib/api-keys/service";

// Server actions of the API key pages: each checks the session and parses its input again.

export type CreateKeyResult = FormState | { created: { id: number; name: string; key: string; secret: string } };

export async function createKeyAction(input: CreateApiKeyInput): Promise<CreateKeyResult> {
  const session = await requireAdminSession();
  try {
    const created = await createApiKey(await getDb(), createApiKeySchema.parse(input), { type: "admin_user", id: session.adminUserId });
    revalidatePath("/admin/settings/api-keys");
    return { created: { id: created.id, name: created.name, key: created.key, secret: created.secret } };
  } catch (error) {
    return formError(error);
  }
}

export async function updateKeyAction(id: number, input: UpdateApiKeyInput): Promise<FormState> {
  const session = await requireAdminSession();
  try {
    await updateApiKey(await getDb(), id, updateApiKeySchema.parse(input), { type: "admin_user", id: session.adminUserId });
  } catch (error) {
    return formError(error);
  }
  revalidatePath("/admin/settings/api-keys");
  return null;
}

export async function deleteKeyAction(id: number): Promise<void> {
  const session = await requireAdminSession();
  await deleteApiKey(await getDb(), id, { type: "admin_user", id: session.adminUserId });
  revalidatePath("/admin/settings/api-keys");
}
