import { integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { adminUsers } from "./admins";
import { apiKeys } from "./api-keys";
import { createdAt } from "./columns";

export const ssoTokens = pgTable("sso_tokens", {
  id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
  // SHA-256 (hex) of the token; the token itself is only in the API response.
  tokenHash: text("token_hash").notNull().unique(),
  adminUserId: integer("admin_user_id")
    .notNull()
    .references(() => adminUsers.id, { onDelete: "cascade" }),
  apiKeyId: integer("api_key_id").references(() => apiKeys.id, { onDelete: "set null" }),
  expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
  usedAt: timestamp("used_at", { withTimezone: true }),
  createdAt: createdAt(),
});
