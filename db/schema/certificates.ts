import { boolean, integer, pgEnum, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { updatedAt } from "./columns";
import { domains } from "./domains";

export const sslStatus = pgEnum("ssl_status", ["off", "pending", "active", "failed"]);

/**
 * Which certificate of a domain: its site's (the domain, www., its parked names), or the host name
 * its mail is read and sent on, `mail.<domain>`, when it is a mail domain (docs/email.md "TLS").
 */
export const certificateKind = pgEnum("certificate_kind", ["site", "mail"]);

// AutoSSL's state of one certificate: a site's (a domain or subdomain; parked names ride on the
// certificate of the domain they are parked on) or a mail domain's host name's. No row: AutoSSL has
// not looked at it yet. The files themselves live in CERTS_DIR/<its first name>/
// (lib/provisioning/acme.ts).
export const domainCertificates = pgTable(
  "domain_certificates",
  {
    domainId: integer("domain_id")
      .notNull()
      .references(() => domains.id, { onDelete: "cascade" }),
    kind: certificateKind("kind").notNull().default("site"),
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
  },
  (table) => [primaryKey({ columns: [table.domainId, table.kind] })],
);
