import { sql } from "drizzle-orm";
import { boolean, index, integer, pgTable, text, timestamp, unique, uniqueIndex } from "drizzle-orm/pg-core";
import { hostingAccounts } from "./accounts";
import { createdAt, updatedAt } from "./columns";
import { domains } from "./domains";

// Email of hosting accounts (docs/email.md). These rows are the truth; each account's mail is
// rendered as files on the machine that hosts it (lib/provisioning/mail.ts: Postfix's virtual
// tables, Dovecot's passwd-file), never read there from this database.

// A domain of the account that receives mail. Goes with its domain (and that domain's mailboxes
// and aliases with it).
export const mailDomains = pgTable(
  "mail_domains",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    accountId: integer("account_id")
      .notNull()
      .references(() => hostingAccounts.id, { onDelete: "cascade" }),
    domainId: integer("domain_id")
      .notNull()
      .unique()
      .references(() => domains.id, { onDelete: "cascade" }),
    // The domain's name as `domains` has it (lower case, ASCII): unique there, so here too.
    domain: text("domain").notNull().unique(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  // GET /api/client/email/domains: the account's mail domains.
  (table) => [index("mail_domains_account_id_idx").on(table.accountId)],
);

export const mailboxes = pgTable(
  "mailboxes",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    accountId: integer("account_id")
      .notNull()
      .references(() => hostingAccounts.id, { onDelete: "cascade" }),
    mailDomainId: integer("mail_domain_id")
      .notNull()
      .references(() => mailDomains.id, { onDelete: "cascade" }),
    localPart: text("local_part").notNull(),
    // local_part@domain, lower case: one address is one mailbox on the whole panel.
    address: text("address").notNull().unique(),
    // "{SHA512-CRYPT}$6$rounds=…$salt$hash": what Dovecot's passwd-file verifies; never the password.
    passwordHash: text("password_hash").notNull(),
    quotaMb: integer("quota_mb").notNull(),
    enabled: boolean("enabled").notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  // GET /api/client/email/mailboxes and the account's mail state (lib/nodes/reconcile.ts).
  (table) => [index("mailboxes_account_id_idx").on(table.accountId)],
);

export const mailAliases = pgTable(
  "mail_aliases",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    accountId: integer("account_id")
      .notNull()
      .references(() => hostingAccounts.id, { onDelete: "cascade" }),
    mailDomainId: integer("mail_domain_id")
      .notNull()
      .references(() => mailDomains.id, { onDelete: "cascade" }),
    // Empty for the domain's catch-all (address `@domain`).
    localPart: text("local_part").notNull(),
    // local_part@domain, or @domain: one alias per address on the whole panel.
    address: text("address").notNull(),
    // Where its mail goes: full addresses, local or elsewhere, in the order given.
    targets: text("targets").array().notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [unique("mail_aliases_address_unique").on(table.address), index("mail_aliases_account_id_idx").on(table.accountId)],
);

// A mail domain's DKIM keys (docs/email.md "DKIM"): the private key is on the machine that hosts
// the account (lib/provisioning/mail.ts makeDkimKey), never here; the public key is what the
// zone's TXT record `<selector>._domainkey` publishes. A rotation publishes a new key
// ("published"), then signs with it ("signing") and retires the old one, whose TXT record stays
// until `retired_at` + 7 days (lib/email/dkim.ts).
export const mailDkimKeys = pgTable(
  "mail_dkim_keys",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    mailDomainId: integer("mail_domain_id")
      .notNull()
      .references(() => mailDomains.id, { onDelete: "cascade" }),
    selector: text("selector").notNull(),
    // Base64 of the DER SubjectPublicKeyInfo: the TXT record's p=.
    publicKey: text("public_key").notNull(),
    state: text("state", { enum: ["published", "signing", "retired"] }).notNull(),
    retiredAt: timestamp("retired_at", { withTimezone: true }),
    createdAt: createdAt(),
  },
  (table) => [
    unique("mail_dkim_keys_domain_selector_unique").on(table.mailDomainId, table.selector),
    // One key signs for a domain.
    uniqueIndex("mail_dkim_keys_signing_idx").on(table.mailDomainId).where(sql`${table.state} = 'signing'`),
    // The sweep of retired keys whose 7 days are over.
    index("mail_dkim_keys_retired_at_idx").on(table.retiredAt),
  ],
);
