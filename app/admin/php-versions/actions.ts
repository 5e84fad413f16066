"use server";

import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { idField } from "@/lib/http/operation";
import type { PhpVersionInput } from "@/lib/php/schemas";
import { addPhpVersion, updatePhpVersion } from "@/lib/php/service";

// Server actions of the PHP version pages; the services parse the input with the same schema.

export async function addPhpVersionAction(input: PhpVersionInput) {
  return runAdminFormAction("/admin/php-versions", (db, actor) => addPhpVersion(db, input, actor));
}

export async function updatePhpVersionAction(id: number, input: PhpVersionInput) {
  return runAdminFormAction("/admin/php-versions", (db, actor) => updatePhpVersion(db, idField.parse(id), input, actor));
}
