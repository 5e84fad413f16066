import { sql } from "drizzle-orm";
import { boolean, check, index, integer, pgEnum, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { hostingAccounts, resellers } from "./accounts";
import { adminUsers } from "./admins";
import { createdAt, updatedAt } from "./columns";

export const apiKeyScope = pgEnum("api_key_scope", ["admin", "reseller", "account"]);

export const apiKeys = pgTable(
  "api_keys",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    name: text("name").notNull(),
    // Public token sent in X-API-Key: "hcp_" + random base62.
    key: text("key").notNull().unique(),
    // SHA-256 (hex) of the secret; the secret itself is never stored.
    secretHash: text("secret_hash").notNull().unique(),
    // First characters of the secret, to recognise it in the masked list.
    secretStart: text("secret_start").notNull(),
    scope: apiKeyScope("scope").notNull(),
    resellerId: integer("reseller_id").references(() => resellers.id, { onDelete: "cascade" }),
    accountId: integer("account_id").references(() => hostingAccounts.id, { onDelete: "cascade" }),
    // The admin an admin key belongs to (docs/security.md "An admin key is its admin's"): the key
    // works only while that admin is enabled, goes when the admin is removed, and SSO signs in as
    // this admin and no other. Null on reseller and account keys, and on admin keys made on the
    // command line without --owner: those are the operator's, which the API takes and SSO refuses.
    ownerAdminId: integer("owner_admin_id").references(() => adminUsers.id, { onDelete: "cascade" }),
    isEnabled: boolean("is_enabled").notNull().default(true),
    // Addresses and CIDR ranges; empty = any address.
    allowedIps: text("allowed_ips").array().notNull().default(sql`'{}'::text[]`),
    allowAllEndpoints: boolean("allow_all_endpoints").notNull().default(true),
    // "METHOD /api/path/{param}" entries from the route registry.
    allowedEndpoints: text("allowed_endpoints").array().notNull().default(sql`'{}'::text[]`),
    // What the admin list's search box matches: name and key, lower-cased once on write (a
    // plain LIKE over it is several times faster than ILIKE over both columns).
    searchText: text("search_text")
      .notNull()
      .generatedAlwaysAs(sql`lower(name || chr(10) || key)`),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
    lastUsedIp: text("last_used_ip"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    check(
      "api_keys_scope_target",
      sql`(${table.scope} = 'admin' AND ${table.resellerId} IS NULL AND ${table.accountId} IS NULL)
        OR (${table.scope} = 'reseller' AND ${table.resellerId} IS NOT NULL AND ${table.accountId} IS NULL)
        OR (${table.scope} = 'account' AND ${table.accountId} IS NOT NULL AND ${table.resellerId} IS NULL)`,
    ),
    check("api_keys_owner_admin_scope", sql`${table.ownerAdminId} IS NULL OR ${table.scope} = 'admin'`),
    // The admin list orders by newest first.
    index("api_keys_created_at_idx").on(table.createdAt),
  ],
);
