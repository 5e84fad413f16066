import { boolean, index, integer, pgTable, text, unique } from "drizzle-orm/pg-core";
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
