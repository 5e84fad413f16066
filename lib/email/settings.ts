import { asc, inArray } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { mailDomains } from "@/db/schema";
import { mailHostOf } from "@/lib/provisioning/rules";
import type { MailSettings } from "./schemas";

// What a customer types into a mail client (DESIGN.md "Email": the account's GET gains
// `mail_settings`). The host is the name the zone's MX points at (docs/email.md "DNS"): its A
// record follows the account's machine, as the apex's does, so it stays right through a move.

/** The servers and ports a mail client takes for a mailbox of `domain`: IMAP and POP3 over TLS, submission on 587 (STARTTLS) and 465. */
export const mailClientSettings = (domain: string): MailSettings => {
  const host = mailHostOf(domain);
  return { imap: { host, port: 993, tls: true }, pop3: { host, port: 995, tls: true }, smtp: { host, ports: [587, 465] } };
};

/**
 * Each account's mail settings, by id. The host is mail.<domain> of the account's main domain when
 * that is a mail domain (or none is yet: the name it will have), else of its first mail domain —
 * the one name among the account's that the panel's zone surely answers for.
 */
export async function mailSettingsOf(db: Queryable, accounts: { id: number; domain: string }[]): Promise<Map<number, MailSettings>> {
  const rows = accounts.length
    ? await db.select({ accountId: mailDomains.accountId, domain: mailDomains.domain }).from(mailDomains).where(inArray(mailDomains.accountId, accounts.map((account) => account.id))).orderBy(asc(mailDomains.id))
    : [];
  const byAccount = new Map<number, string[]>();
  for (const row of rows) byAccount.set(row.accountId, [...(byAccount.get(row.accountId) ?? []), row.domain]);
  return new Map(
    accounts.map((account) => {
      const own = byAccount.get(account.id) ?? [];
      const domain = own.length === 0 || own.includes(account.domain) ? account.domain : own[0];
      return [account.id, mailClientSettings(domain)];
    }),
  );
}
