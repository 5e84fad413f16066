"use server";

import { revalidatePath } from "next/cache";
import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { requireAdminSession } from "@/lib/admin-session/session";
import type { CreateApiKeyInput, UpdateApiKeyInput } from "@/lib/api-keys/schemas";
import { createApiKey, deleteApiKey, searchApiKeysBySecret, updateApiKey } from "@/lib/api-keys/service";
import { idField } from "@/lib/http/operation";

// Server actions of the API key pages; the services parse the input with the same schemas.

const LIST = "/admin/settings/api-keys";

/** What the create page shows of a new key: the only time its secret leaves the server. */
export type NewKey = { name: string; key: string; secret: string };

export async function createKeyAction(input: CreateApiKeyInput) {
  return runAdminFormAction(
    LIST,
    (db, actor) => createApiKey(db, input, actor),
    ({ name, key, secret }): NewKey => ({ name, key, secret }),
  );
}

export async function updateKeyAction(id: number, input: UpdateApiKeyInput) {
  return runAdminFormAction(LIST, (db, actor) => updateApiKey(db, idField.parse(id), input, actor));
}

export async function deleteKeyAction(id: number): Promise<void> {
  const { admin, db } = await requireAdminSession();
  await deleteApiKey(db, id, { type: "admin_user", id: admin.adminUserId });
  revalidatePath(LIST);
}

/**
 * The list's search of a term that may hold a secret: a POST (this action), so the term never
 * enters a URL. Answers the keys it matches and which key's secret it is, if any.
 */
export async function searchKeysBySecretAction(term: string) {
  const { db } = await requireAdminSession();
  const { rows, total, secretOf } = await searchApiKeysBySecret(db, String(term));
  const note = secretOf
    ? `This is the secret of the key “${secretOf.name}”.`
    : total === 0
      ? "No key's name, API key or secret matches. Of a secret only its first characters are kept (as the list shows them): search those."
      : null;
  return { rows, total, note };
}
