import { boolean, integer, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./columns";

export const adminUsers = pgTable("admin_users", {
  id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
  email: text("email").notNull().unique(),
  name: text("name").notNull().default(""),
  // scrypt: "scrypt$N$r$p$salt$hash" (see lib/admins/password.ts)
  passwordHash: text("password_hash").notNull(),
  // A disabled admin cannot sign in, and their sessions end.
  isEnabled: boolean("is_enabled").notNull().default(true),
  // Carried in each session token; bumping it (sign-out, password change) ends every session
  // issued before. See lib/admin-session/session.ts.
  sessionGeneration: integer("session_generation").notNull().default(0),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

// Panel-wide values generated once and shared by every instance (AUTH_SECRET when not configured,
// the one-time set-up token's hash).
export const settings = pgTable("settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  createdAt: createdAt(),
});
