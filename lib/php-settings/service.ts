import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { phpSettings } from "@/db/schema";
import { lockAccount } from "@/lib/accounts/lock";
import { validationError } from "@/lib/errors";
import { syncAccountSites } from "@/lib/hosting/service";
import { phpSettingsOf } from "./rows";
import { type PhpSettings, phpSettingsSchema, type updatePhpSettingsSchema } from "./schemas";

// An account's PHP settings: a row once changed, the defaults before, and in force always within
// the plan's caps (./rows.ts withinCaps: a default or an earlier choice above them is lowered). A
// change is checked against the caps and written to the account's pools and sites in its
// transaction (a server that refuses them rolls the change back).

/** GET /api/client/php-settings: the settings in force. */
export async function getPhpSettings(db: Queryable, accountId: number): Promise<PhpSettings> {
  return (await phpSettingsOf(db, [accountId])).get(accountId)!;
}

/**
 * PUT /api/client/php-settings: within the plan's maxima, post_max_size ≥ upload_max_filesize.
 * The fields left out keep the values in force, which are within the caps already: a change of
 * one field is never refused for another.
 */
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

/**
 * After a plan's PHP caps changed, or an account changed plans: each account's pools and sites
 * are written again with the settings now in force, one account at a time under its row lock
 * (only files whose content changed are written). A refusal is logged: the caps are the plan's
 * whatever a server says, and the next change of the account writes them again.
 */
export async function applyPhpCaps(db: Database, accountIds: number[]): Promise<void> {
  for (const accountId of accountIds) {
    await db
      .transaction(async (tx) => {
        await lockAccount(tx, accountId);
        await syncAccountSites(tx, accountId);
      })
      .catch((error) => console.error(`[php] the sites of account ${accountId} could not follow its plan's PHP caps:`, (error as Error).message));
  }
}
