import { sql } from "drizzle-orm";
import { boolean, check, index, integer, pgEnum, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./columns";
import { nodes } from "./nodes";

export const plans = pgTable("plans", {
  id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
  name: text("name").notNull().unique(),
  // Quotas: null means unlimited.
  maxDatabases: integer("max_databases"),
  maxDatabaseUsers: integer("max_database_users"),
  maxDomains: integer("max_domains"),
  maxDnsRecords: integer("max_dns_records"),
  diskMb: integer("disk_mb"),
  // Maxima of the accounts' PHP settings and cron jobs (null: the server's own maxima, unlimited jobs).
  maxPhpMemoryMb: integer("max_php_memory_mb"),
  maxPhpUploadMb: integer("max_php_upload_mb"),
  maxCronJobs: integer("max_cron_jobs"),
  // Email (docs/email.md): how many mailboxes, their quotas' sum in MB; messages sent per hour and
  // per day (the sending limits: docs/email.md "Sending limits").
  mailboxes: integer("mailboxes"),
  mailQuotaMb: integer("mail_quota_mb"),
  mailPerHour: integer("mail_per_hour"),
  mailPerDay: integer("mail_per_day"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const resellers = pgTable("resellers", {
  id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
  username: text("username").notNull().unique(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const accountStatus = pgEnum("account_status", ["active", "suspended"]);

export const hostingAccounts = pgTable(
  "hosting_accounts",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    username: text("username").notNull().unique(),
    // The account's main domain name (also a row of `domains`).
    domain: text("domain").notNull(),
    email: text("email"),
    name: text("name"),
    phone: text("phone"),
    address: text("address"),
    city: text("city"),
    state: text("state"),
    zip: text("zip"),
    country: text("country"),
    company: text("company"),
    isAutoSslEnabled: boolean("is_auto_ssl_enabled").notNull().default(false),
    status: accountStatus("status").notNull().default("active"),
    // Why the account was suspended (shown to admins; null when active or none was given).
    suspensionReason: text("suspension_reason"),
    hasSshAccess: boolean("has_ssh_access").notNull().default(false),
    planId: integer("plan_id")
      .notNull()
      .references(() => plans.id, { onDelete: "restrict" }),
    resellerId: integer("reseller_id").references(() => resellers.id, { onDelete: "set null" }),
    // The hosting server the account lives on (`local`: the panel's own machine).
    nodeId: integer("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "restrict" }),
    // When its machine last refused a message for its sending limits (docs/email.md "Sending
    // limits"), until an admin lifts the flag (POST …/mail/unflag); null: not flagged.
    mailFlaggedAt: timestamp("mail_flagged_at", { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    // Reseller keys list and check "accounts of this reseller".
    index("hosting_accounts_reseller_id_idx").on(table.resellerId),
    // A node's accounts: its reconcile, its account count, the refusal to delete a node that has some.
    index("hosting_accounts_node_id_idx").on(table.nodeId),
    check("hosting_accounts_username_format", sql`${table.username} ~ '^[a-z][a-z0-9_]{0,31}$'`),
  ],
);
