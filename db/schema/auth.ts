import { bigint, check, integer, pgTable } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";

// One row: a counter bumped by triggers on every change that can revoke or re-scope API access
// (db/migrations/0004_auth_generation_trigger.sql). Each instance reads it once per request (on
// PGlite: follows its notifications, 0009) and drops its key cache when it moved
// (lib/auth/key-cache.ts).
export const authGeneration = pgTable(
  "auth_generation",
  {
    id: integer("id").primaryKey().default(1),
    value: bigint("value", { mode: "number" }).notNull().default(0),
  },
  (table) => [check("auth_generation_single_row", sql`${table.id} = 1`)],
);
