import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { phpSettings } from "@/db/schema";
import { lockAccount } from "@/lib/accounts/lock";
import { validationError } from "@/lib/errors";
import { syncAccountSites } from "@/lib/hosting/service";
import { phpSettingsOf } from "./rows";
import { type PhpSettings, phpSettingsSchema, type updatePhpSettingsSchema } from "./schemas";

// An account's PHP settings: a row once changed, the defaults before. A change is checked
// against the plan's maxima and written to the account's pools and sites in its transaction
// (a server that refuses them rolls the change back).

/** GET /api/client/php-settings */
export async function getPhpSettings(db: Queryable, accountId: number): Promise<PhpSettings> {
  return (await phpSettingsOf(db, [accountId])).get(accountId)!;
}

/** PUT /api/client/php-settings: within the plan's maxima, post_max_size ≥ upload_max_filesize. */
export async function updatePhpSettings(
  db: Database,
  accountId: number,
  patch: z.output<typeof updatePhpSettingsSchema>,
): Promise<PhpSettings> {
  return db.transaction(async (tx) => {
    const { plan } = await lockAccount(tx, accountId);
    const next = phpSettingsSchema.parse({ ...(await getPhpSettings(tx, accountId)), ...patch });
    const limits = [
      ["memory_limit_mb", next.memory_limit_mb, plan.maxPhpMemoryMb],
      ["upload_max_filesize_mb", next.upload_max_filesize_mb, plan.maxPhpUploadMb],
      ["post_max_size_mb", next.post_max_size_mb, plan.maxPhpUploadMb],
    ] as const;
    for (const [field, value, limit] of limits) {
      if (limit !== null && value > limit) throw validationError(field, `must be at most ${limit} (the plan's maximum)`);
    }
    if (next.post_max_size_mb < next.upload_max_filesize_mb) {
      throw validationError("post_max_size_mb", "must be at least upload_max_filesize_mb (an upload travels in a POST)");
    }
    const columns = {
      uploadMaxFilesizeMb: next.upload_max_filesize_mb,
      postMaxSizeMb: next.post_max_size_mb,
      memoryLimitMb: next.memory_limit_mb,
      maxExecutionTimeS: next.max_execution_time_s,
      maxInputVars: next.max_input_vars,
      displayErrors: next.display_errors,
    };
    await tx.insert(phpSettings).values({ accountId, ...columns }).onConflictDoUpdate({ target: phpSettings.accountId, set: columns });
    await syncAccountSites(tx, accountId);
    return next;
  });
}
