import { boolean, index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
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
  // Two-factor sign-in (lib/admins/two-factor.ts): the TOTP secret (base32, stored as is: it is
  // needed to verify codes) once set-up is confirmed, null while 2FA is off; the secret being set
  // up until its first code confirms it; the last time step a code was accepted for, so a code
  // opens at most one sign-in.
  totpSecret: text("totp_secret"),
  totpPendingSecret: text("totp_pending_secret"),
  totpLastStep: integer("totp_last_step"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

// An admin's one-time recovery codes (SHA-256 of the code; the codes are random, so no slow KDF).
// A code is deleted when used.
export const adminRecoveryCodes = pgTable(
  "admin_recovery_codes",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    adminUserId: integer("admin_user_id")
      .notNull()
      .references(() => adminUsers.id, { onDelete: "cascade" }),
    codeHash: text("code_hash").notNull(),
    createdAt: createdAt(),
  },
  // Sign-in with a recovery code: delete where admin and hash match.
  (table) => [index("admin_recovery_codes_admin_hash_idx").on(table.adminUserId, table.codeHash)],
);

// Panel-wide values generated once and shared by every instance (AUTH_SECRET when not configured,
// the one-time set-up token's hash).
export const settings = pgTable("settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  createdAt: createdAt(),
});

// Admin sign-in attempts counted per subject (lib/admin-session/sign-in-throttle.ts): the client
// address ("address:203.0.113.7", an IPv6 client by its /64: "address:2001:db8:1:2::/64") and
// the e-mail tried ("email:" + SHA-256 of it, whether or not an admin has it). A window starts at
// a subject's first attempt and lasts 15 minutes; rows whose window has passed are pruned.
export const signInAttempts = pgTable(
  "sign_in_attempts",
  {
    subject: text("subject").primaryKey(),
    attempts: integer("attempts").notNull(),
    windowStartedAt: timestamp("window_started_at", { withTimezone: true }).notNull(),
  },
  // Pruning deletes the rows whose window has passed.
  (table) => [index("sign_in_attempts_window_started_at_idx").on(table.windowStartedAt)],
);
