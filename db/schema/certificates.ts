import { boolean, integer, pgEnum, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { updatedAt } from "./columns";
import { domains } from "./domains";

export const sslStatus = pgEnum("ssl_status", ["off", "pending", "active", "failed"]);

// AutoSSL's state of one site (a domain or subdomain; parked names ride on the certificate of
// the domain they are parked on). No row: AutoSSL has not looked at the site yet. The files
// themselves live in CERTS_DIR/<domain>/ (lib/provisioning/acme.ts).
export const domainCertificates = pgTable("domain_certificates", {
  domainId: integer("domain_id")
    .primaryKey()
    .references(() => domains.id, { onDelete: "cascade" }),
  status: sslStatus("status").notNull().default("pending"),
  // The names the installed certificate covers (empty: none installed).
  names: text("names").array().notNull().default([]),
  expiresAt: timestamp("expires_at", { withTimezone: true }),
  // Why the last attempt failed, as shown to the admin; null after a success.
  error: text("error"),
  // Back-off: consecutive failures, and no attempt before `next_attempt_at`.
  failures: integer("failures").notNull().default(0),
  nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }),
  // "Renew now": issue again even though the certificate is valid.
  renewRequested: boolean("renew_requested").notNull().default(false),
  // The lock across panel instances: an instance issuing holds it until then (a lease, so a
  // crashed instance's claim runs out).
  issuingUntil: timestamp("issuing_until", { withTimezone: true }),
  updatedAt: updatedAt(),
});
