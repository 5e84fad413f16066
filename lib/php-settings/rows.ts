import { inArray } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { phpSettings } from "@/db/schema";
import { DEFAULT_PHP_SETTINGS, type PhpSettings } from "./schemas";

const toSettings = (row: typeof phpSettings.$inferSelect): PhpSettings => ({
  upload_max_filesize_mb: row.uploadMaxFilesizeMb,
  post_max_size_mb: row.postMaxSizeMb,
  memory_limit_mb: row.memoryLimitMb,
  max_execution_time_s: row.maxExecutionTimeS,
  max_input_vars: row.maxInputVars,
  display_errors: row.displayErrors,
});

/** The PHP settings of each of `accountIds` (the defaults for an account without a row). */
export async function phpSettingsOf(db: Queryable, accountIds: number[]): Promise<Map<number, PhpSettings>> {
  const rows = accountIds.length ? await db.select().from(phpSettings).where(inArray(phpSettings.accountId, accountIds)) : [];
  const byAccount = new Map(rows.map((row) => [row.accountId, toSettings(row)]));
  return new Map(accountIds.map((id) => [id, byAccount.get(id) ?? { ...DEFAULT_PHP_SETTINGS }]));
}
