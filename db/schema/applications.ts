import { boolean, index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { hostingAccounts } from "./accounts";
import { createdAt, updatedAt } from "./columns";

// What an account's applications need besides files and databases (docs/applications.md
// "Running applications"): its PHP settings and its cron jobs.

/** One row per account that changed its PHP settings; an account without one has the defaults. */
export const phpSettings = pgTable("php_settings", {
  accountId: integer("account_id")
    .primaryKey()
    .references(() => hostingAccounts.id, { onDelete: "cascade" }),
  uploadMaxFilesizeMb: integer("upload_max_filesize_mb").notNull(),
  postMaxSizeMb: integer("post_max_size_mb").notNull(),
  memoryLimitMb: integer("memory_limit_mb").notNull(),
  maxExecutionTimeS: integer("max_execution_time_s").notNull(),
  maxInputVars: integer("max_input_vars").notNull(),
  displayErrors: boolean("display_errors").notNull(),
  updatedAt: updatedAt(),
});

export const cronJobs = pgTable(
  "cron_jobs",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    accountId: integer("account_id")
      .notNull()
      .references(() => hostingAccounts.id, { onDelete: "cascade" }),
    // Five fields ("*/5 * * * *") or one of @hourly, @daily, @weekly, @monthly (lib/cron/schedule.ts).
    schedule: text("schedule").notNull(),
    command: text("command").notNull(),
    isEnabled: boolean("is_enabled").notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [index("cron_jobs_account_id_idx").on(table.accountId)],
);
