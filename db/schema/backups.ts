import { bigint, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { hostingAccounts } from "./accounts";

// Backups by restic (docs/backups.md "Status nobody can miss"): what the last runs of each account
// did — the account's own, gone with it, so a later account reusing the username starts with none
// (its restore points stay in the repository, listed by username) —, the lease that lets one panel
// instance at a time run the backup job against the repository, and one lease per account under
// restore.

export const accountBackups = pgTable("account_backups", {
  accountId: integer("account_id")
    .primaryKey()
    .references(() => hostingAccounts.id, { onDelete: "cascade" }),
  lastSuccessAt: timestamp("last_success_at", { withTimezone: true }),
  lastFailureAt: timestamp("last_failure_at", { withTimezone: true }),
  lastError: text("last_error"),
  // Runs (restore points) in the repository, and the restored size of the newest.
  snapshots: integer("snapshots").notNull().default(0),
  sizeBytes: bigint("size_bytes", { mode: "number" }).notNull().default(0),
});

export const backupLease = pgTable("backup_lease", {
  id: integer("id").primaryKey(),
  holder: text("holder"),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
});

// One restore per account at a time, across panel instances: a row while a restore runs,
// renewed while it goes on, deleted when it ends; one left by an instance that died expires.
export const restoreLeases = pgTable("restore_leases", {
  accountId: integer("account_id")
    .primaryKey()
    .references(() => hostingAccounts.id, { onDelete: "cascade" }),
  holder: text("holder").notNull(),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
});
