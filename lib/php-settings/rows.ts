import { eq, inArray } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { hostingAccounts, phpSettings, plans } from "@/db/schema";
import { DEFAULT_PHP_SETTINGS, type PhpSettings } from "./schemas";

const toSettings = (row: typeof phpSettings.$inferSelect): PhpSettings => ({
  upload_max_filesize_mb: row.uploadMaxFilesizeMb,
  post_max_size_mb: row.postMaxSizeMb,
  memory_limit_mb: row.memoryLimitMb,
  max_execution_time_s: row.maxExecutionTimeS,
  max_input_vars: row.maxInputVars,
  display_errors: row.displayErrors,
});

/** The PHP caps of a plan (null: no cap). */
export interface PhpCaps {
  maxPhpMemoryMb: number | null;
  maxPhpUploadMb: number | null;
}

const capped = (value: number, cap: number | null) => (cap === null ? value : Math.min(value, cap));

/**
 * The settings in force: the account's own (or the defaults) lowered into its plan's caps. A plan
 * is the provider's wall around a customer, so a default above it (64 MB uploads on a 16 MB plan)
 * or a value chosen under an earlier, larger plan never reaches PHP or nginx. Both sizes are
 * lowered to the same cap, so post_max_size stays at least upload_max_filesize.
 */
export function withinCaps(settings: PhpSettings, caps: PhpCaps): PhpSettings {
  return {
    ...settings,
    memory_limit_mb: capped(settings.memory_limit_mb, caps.maxPhpMemoryMb),
    upload_max_filesize_mb: capped(settings.upload_max_filesize_mb, caps.maxPhpUploadMb),
    post_max_size_mb: capped(settings.post_max_size_mb, caps.maxPhpUploadMb),
  };
}

/**
 * The PHP settings in force for each of `accountIds` (withinCaps of the stored row, or of the
 * defaults for an account without one). Pools, sites and the API all read them here.
 */
export async function phpSettingsOf(db: Queryable, accountIds: number[]): Promise<Map<number, PhpSettings>> {
  if (accountIds.length === 0) return new Map();
  const rows = await db
    .select({ accountId: hostingAccounts.id, stored: phpSettings, maxPhpMemoryMb: plans.maxPhpMemoryMb, maxPhpUploadMb: plans.maxPhpUploadMb })
    .from(hostingAccounts)
    .innerJoin(plans, eq(plans.id, hostingAccounts.planId))
    .leftJoin(phpSettings, eq(phpSettings.accountId, hostingAccounts.id))
    .where(inArray(hostingAccounts.id, accountIds));
  const byAccount = new Map(rows.map((row) => [row.accountId, withinCaps(row.stored ? toSettings(row.stored) : { ...DEFAULT_PHP_SETTINGS }, row)]));
  return new Map(accountIds.map((id) => [id, byAccount.get(id) ?? { ...DEFAULT_PHP_SETTINGS }]));
}
