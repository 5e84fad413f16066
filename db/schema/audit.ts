import { index, integer, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";

export const auditLog = pgTable(
  "audit_log",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    at: timestamp("at", { withTimezone: true }).notNull().defaultNow(),
    // Who: "admin_user", "api_key", "cli" or "system", and the id where there is one.
    actorType: text("actor_type").notNull(),
    actorId: integer("actor_id"),
    // What: "api_key.create", "sso_token.create", …
    action: text("action").notNull(),
    targetType: text("target_type"),
    targetId: integer("target_id"),
    ip: text("ip"),
    details: jsonb("details").$type<Record<string, unknown>>(),
  },
  (table) => [index("audit_log_at_idx").on(table.at)],
);
