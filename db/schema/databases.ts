import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { hostingAccounts } from "./accounts";
import { createdAt, updatedAt } from "./columns";

export const customerDatabases = pgTable(
  "customer_databases",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    accountId: integer("account_id")
      .notNull()
      .references(() => hostingAccounts.id, { onDelete: "cascade" }),
    // Full server-side name, prefix `<username>_` included; unique on the server.
    databaseName: text("database_name").notNull().unique(),
    createdAt: createdAt(),
  },
  (table) => [
    index("customer_databases_account_id_idx").on(table.accountId),
    check("customer_databases_name_format", sql`${table.databaseName} ~ '^[A-Za-z0-9_]{1,64}$'`),
  ],
);

export const databaseUsers = pgTable(
  "database_users",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    accountId: integer("account_id")
      .notNull()
      .references(() => hostingAccounts.id, { onDelete: "cascade" }),
    // Full server-side user name, prefix included; the password is never stored.
    username: text("username").notNull().unique(),
    createdAt: createdAt(),
  },
  (table) => [
    index("database_users_account_id_idx").on(table.accountId),
    check("database_users_name_format", sql`${table.username} ~ '^[A-Za-z0-9_]{1,50}$'`),
  ],
);

// A database user linked to a database. Restrict on both sides: detach before deleting either.
export const databaseGrants = pgTable(
  "database_grants",
  {
    databaseUserId: integer("database_user_id")
      .notNull()
      .references(() => databaseUsers.id, { onDelete: "restrict" }),
    databaseId: integer("database_id")
      .notNull()
      .references(() => customerDatabases.id, { onDelete: "restrict" }),
    // Upper-case MySQL privilege names, e.g. {"SELECT","INSERT"} or {"ALL PRIVILEGES"}.
    privileges: text("privileges").array().notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    primaryKey({ columns: [table.databaseUserId, table.databaseId] }),
    // 409 check "database still has users".
    index("database_grants_database_id_idx").on(table.databaseId),
  ],
);
