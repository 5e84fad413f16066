import { index, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { apiKeys } from "./api-keys";

// Idempotency-Key of the account lifecycle operations (lib/idempotency): one row per API key and
// header value, claimed by the first request (the primary key decides between concurrent ones,
// on every instance), holding that request's answer once it is known. Kept 24 hours.
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    apiKeyId: integer("api_key_id")
      .notNull()
      .references(() => apiKeys.id, { onDelete: "cascade" }),
    key: text("key").notNull(),
    // SHA-256 of the method, path and parsed body: a retry must send the same request.
    requestHash: text("request_hash").notNull(),
    // The first answer; null while the first request is still running.
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ columns: [table.apiKeyId, table.key] }),
    // Pruning of rows older than 24 hours.
    index("idempotency_keys_created_at_idx").on(table.createdAt),
  ],
);
