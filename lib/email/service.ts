import { and, asc, eq, inArray, ne, sql, sum } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { dnsRecords, domainCertificates, domains, hostingAccounts, mailAliases, mailboxes, mailDkimKeys, mailDomains, nodes } from "@/db/schema";
import { assertQuota, lockAccount } from "@/lib/accounts/lock";
import { autoSslServes, requestAutoSslCheck } from "@/lib/autossl/job";
import { sslState } from "@/lib/autossl/state";
import { syncZoneFile } from "@/lib/dns/zone-file-sync";
import { bumpSerial, DEFAULT_TTL, lockZone } from "@/lib/dns/zone";
import type { SslState } from "@/lib/domains/schemas";
import { notFound, validationError } from "@/lib/errors";
import { syncAccountSites } from "@/lib/hosting/service";
import { hostOfAccount } from "@/lib/nodes/hosts";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { type AccountMail, applyAllMail, mailServerEnabled } from "@/lib/provisioning/mail";
import { DKIM_RETIRED_KEEP_MS, dkimKeysOf, type DkimKeyRow, dkimRecordName, dkimTxtContent, publishDkimKey, signingKeysOf } from "./dkim";
import { mailboxPasswordHash } from "@/lib/provisioning/mail-password";
import { mailHostOf } from "@/lib/provisioning/rules";
import { sendingLimitsOf } from "./sending";
import type {
  AliasRecord,
  createAliasBodySchema,
  createMailboxBodySchema,
  createMailDomainBodySchema,
  MailboxRecord,
  MailDomainRecord,
  updateMailboxBodySchema,
} from "./schemas";

// An account's email (docs/email.md). Records are the truth; every change ends, under the
// account's row lock and inside its transaction, by applying the account's whole mail on its host
// (lib/provisioning/mail.ts through lib/nodes/hosts.ts), so a refusal there rolls the change back.
// Addresses are one namespace across all accounts (a mailbox's address is no alias's, and alias
// chains may cross accounts): every write of an address takes MAIL_ADDRESSES_LOCK first, so the
// checks that span accounts (shadowing, loops) see every other writer's result.

/** pg_advisory_xact_lock key of every mailbox and alias write ("mailaddr" in ASCII). */
const MAIL_ADDRESSES_LOCK = 0x6d61696c61646472n;

/** The records the zone of a mail domain gets when it has none of the kind (docs/email.md "DNS"). */
const SPF = "v=spf1 mx a -all";
const DMARC = "v=DMARC1; p=none";
const MX_PRIORITY = 10;

// ---- The account's mail, as its host renders it ----

/** The mail of `accountIds`, as lib/provisioning/mail.ts takes it (every account listed, mail or not). */
export async function accountMailStates(db: Queryable, accountIds: number[]): Promise<Map<number, AccountMail>> {
  const states = new Map<number, AccountMail>(accountIds.map((id) => [id, { domains: [], mailboxes: [], aliases: [], dkim: [] }]));
  if (accountIds.length === 0) return states;
  const [domainRows, siteDomainRows, mailboxRows, aliasRows, dkim, limits] = await Promise.all([
    db.select({ accountId: mailDomains.accountId, domain: mailDomains.domain }).from(mailDomains).where(inArray(mailDomains.accountId, accountIds)).orderBy(asc(mailDomains.id)),
    db.select({ accountId: domains.accountId, domain: domains.domain }).from(domains).where(inArray(domains.accountId, accountIds)).orderBy(asc(domains.id)),
    db
      .select({ accountId: mailboxes.accountId, localPart: mailboxes.localPart, domain: mailDomains.domain, passwordHash: mailboxes.passwordHash, quotaMb: mailboxes.quotaMb, enabled: mailboxes.enabled })
      .from(mailboxes)
      .innerJoin(mailDomains, eq(mailDomains.id, mailboxes.mailDomainId))
      .where(inArray(mailboxes.accountId, accountIds))
      .orderBy(asc(mailboxes.id)),
    db
      .select({ accountId: mailAliases.accountId, localPart: mailAliases.localPart, domain: mailDomains.domain, targets: mailAliases.targets })
      .from(mailAliases)
      .innerJoin(mailDomains, eq(mailDomains.id, mailAliases.mailDomainId))
      .where(inArray(mailAliases.accountId, accountIds))
      .orderBy(asc(mailAliases.id)),
    signingKeysOf(db, accountIds),
    sendingLimitsOf(db, accountIds),
  ]);
  for (const row of domainRows) states.get(row.accountId)!.domains.push(row.domain);
  // Its PHP may send as each of its domains, mail hosted here or not (docs/email.md "PHP's mail()").
  for (const row of siteDomainRows) {
    const state = states.get(row.accountId)!;
    if (!state.domains.includes(row.domain)) state.sendingDomains = [...(state.sendingDomains ?? []), row.domain];
  }
  for (const { accountId, ...mailbox } of mailboxRows) states.get(accountId)!.mailboxes.push(mailbox);
  for (const { accountId, ...alias } of aliasRows) states.get(accountId)!.aliases.push(alias);
  for (const [accountId, keys] of dkim) states.get(accountId)!.dkim = keys;
  for (const [accountId, accountLimits] of limits) states.get(accountId)!.limits = accountLimits;
  return states;
}

/**
 * Applies the account's whole mail, as `tx` sees it, on its host (the change's last step). Returns
 * how long until Dovecot there sees it (ms): the caller waits that long after its commit
 * (settle), outside the transaction, so no lock is held meanwhile.
 */
export async function applyAccountMailOf(tx: Queryable, accountId: number): Promise<number> {
  const [account] = await tx.select({ username: hostingAccounts.username, status: hostingAccounts.status }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId));
  if (!account) return 0;
  const mail = (await accountMailStates(tx, [accountId])).get(accountId)!;
  const host = await hostOfAccount(tx, accountId);
  return (await host.run("mail.apply", { username: account.username, suspended: account.status === "suspended", mail })).settle_ms;
}

/** Waits until the mail servers see a change applied `ms` before (applyAccountMailOf). */
export const settleMail = (ms: number) => (ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve());

/**
 * At start: the mail of every account of the panel's own machine (`local`), so tables lost or
 * left from before are made as the records say (a node gets the same from its reconcile).
 */
export async function syncLocalMail(db: Queryable): Promise<void> {
  if (!mailServerEnabled()) return;
  const rows = await db
    .select({ id: hostingAccounts.id, username: hostingAccounts.username, status: hostingAccounts.status })
    .from(hostingAccounts)
    .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
    .where(eq(nodes.name, LOCAL_NODE));
  const mail = await accountMailStates(db, rows.map((row) => row.id));
  await applyAllMail(rows.map((row) => ({ username: row.username, suspended: row.status === "suspended", mail: mail.get(row.id)! }))).catch((error) =>
    console.error("[mail] the mail tables could not be written at start:", (error as Error).message),
  );
}

// ---- Mail domains ----

type DnsCheck = MailDomainRecord["dns"]["mx"];

function check(name: string, type: string, expected: string, found: string[], matches: (value: string) => boolean): DnsCheck {
  const status = found.includes(expected) ? "ok" : found.some(matches) ? "different" : "missing";
  return { name, type, expected, found, status };
}

/** What the zone of `domain` holds for mail, against what mail on this panel needs. */
async function dnsOf(db: Queryable, domainId: number, domain: string, signing: DkimKeyRow | undefined): Promise<MailDomainRecord["dns"]> {
  const records = await db
    .select({ name: dnsRecords.name, type: dnsRecords.type, content: dnsRecords.content, priority: dnsRecords.priority })
    .from(dnsRecords)
    .where(and(eq(dnsRecords.domainId, domainId), inArray(dnsRecords.name, ["@", "_dmarc", ...(signing ? [dkimRecordName(signing.selector)] : [])]), inArray(dnsRecords.type, ["MX", "TXT"])))
    .orderBy(asc(dnsRecords.id));
  const at = (name: string, type: "MX" | "TXT") => records.filter((record) => record.name === name && record.type === type);
  const mx = at("@", "MX").map((record) => `${record.priority} ${record.content}`);
  const spf = at("@", "TXT").map((record) => record.content).filter((content) => content.startsWith("v=spf1"));
  const dmarc = at("_dmarc", "TXT").map((record) => record.content).filter((content) => content.startsWith("v=DMARC1"));
  return {
    mx: check(domain, "MX", `${MX_PRIORITY} ${mailHostOf(domain)}`, mx, () => true),
    spf: check(domain, "TXT", SPF, spf, () => true),
    dkim: signing
      ? check(`${dkimRecordName(signing.selector)}.${domain}`, "TXT", dkimTxtContent(signing.publicKey), at(dkimRecordName(signing.selector), "TXT").map((record) => record.content), () => true)
      : // No key: the machine serves no mail (MAIL_SERVER off), or a domain made before DKIM (rotate makes its first).
        { name: null, type: "TXT", expected: null, found: [], status: "no_key" },
    dmarc: check(`_dmarc.${domain}`, "TXT", DMARC, dmarc, () => true),
  };
}

async function toMailDomainRecord(db: Queryable, row: typeof mailDomains.$inferSelect): Promise<MailDomainRecord> {
  const keys = await dkimKeysOf(db, row.id);
  const signing = keys.find((key) => key.state === "signing");
  return {
    id: row.id,
    domain: row.domain,
    domain_id: row.domainId,
    dns: await dnsOf(db, row.domainId, row.domain, signing),
    dkim: {
      selector: signing?.selector ?? null,
      keys: keys.map((key) => ({
        selector: key.selector,
        state: key.state,
        created_at: key.createdAt.toISOString(),
        retired_at: key.retiredAt?.toISOString() ?? null,
        unpublished_after: key.retiredAt ? new Date(key.retiredAt.getTime() + DKIM_RETIRED_KEEP_MS).toISOString() : null,
      })),
    },
    ssl: await mailHostSsl(db, row),
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * The certificate of the mail domain's host name as AutoSSL keeps it (docs/email.md "TLS"): its
 * own (kind "mail"), or that of the site of that name when there is one.
 */
async function mailHostSsl(db: Queryable, row: typeof mailDomains.$inferSelect): Promise<SslState> {
  const host = mailHostOf(row.domain);
  const [account] = await db
    .select({ autoSsl: hostingAccounts.isAutoSslEnabled, node: nodes.name })
    .from(hostingAccounts)
    .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
    .where(eq(hostingAccounts.id, row.accountId));
  const [site] = await db.select({ id: domains.id }).from(domains).where(eq(domains.domain, host));
  const [certificate] = await db
    .select({ status: domainCertificates.status, names: domainCertificates.names, expiresAt: domainCertificates.expiresAt, error: domainCertificates.error })
    .from(domainCertificates)
    .where(
      site
        ? and(eq(domainCertificates.domainId, site.id), eq(domainCertificates.kind, "site"))
        : and(eq(domainCertificates.domainId, row.domainId), eq(domainCertificates.kind, "mail")),
    );
  return sslState(host, certificate ?? null, account.autoSsl && autoSslServes(account.node));
}

export async function listMailDomains(db: Queryable, accountId: number): Promise<MailDomainRecord[]> {
  const rows = await db.select().from(mailDomains).where(eq(mailDomains.accountId, accountId)).orderBy(asc(mailDomains.id));
  return Promise.all(rows.map((row) => toMailDomainRecord(db, row)));
}

/**
 * The zone of a new mail domain gets what mail needs where it has none of the kind: MX to
 * mail.<domain>, an A record for mail.<domain> at the apex's address (it follows the account's
 * node as the apex does), SPF and DMARC. Records of the customer's own are left as they are (the
 * `dns` answer shows them as "different"). Returns whether the zone changed.
 */
async function addMailRecords(tx: Queryable, domainId: number): Promise<boolean> {
  const zone = await lockZone(tx, domainId);
  const records = await tx.select().from(dnsRecords).where(eq(dnsRecords.domainId, domainId));
  const has = (name: string, test: (record: (typeof records)[number]) => boolean) => records.some((record) => record.name === name && test(record));
  const cname = (name: string) => has(name, (record) => record.type === "CNAME");
  const apex = records.find((record) => record.name === "@" && record.type === "A");
  const added: (typeof dnsRecords.$inferInsert)[] = [];
  if (!has("@", (record) => record.type === "MX")) added.push({ domainId, name: "@", type: "MX", content: mailHostOf(zone.domain), priority: MX_PRIORITY, ttl: DEFAULT_TTL });
  if (apex && !has("mail", () => true)) added.push({ domainId, name: "mail", type: "A", content: apex.content, ttl: apex.ttl });
  if (!has("@", (record) => record.type === "TXT" && record.content.startsWith("v=spf1"))) added.push({ domainId, name: "@", type: "TXT", content: SPF, ttl: DEFAULT_TTL });
  if (!cname("_dmarc") && !has("_dmarc", (record) => record.type === "TXT" && record.content.startsWith("v=DMARC1"))) {
    added.push({ domainId, name: "_dmarc", type: "TXT", content: DMARC, ttl: DEFAULT_TTL });
  }
  if (added.length === 0) return false;
  await tx.insert(dnsRecords).values(added);
  await bumpSerial(tx, zone);
  return true;
}

export async function createMailDomain(db: Database, accountId: number, input: z.output<typeof createMailDomainBodySchema>): Promise<MailDomainRecord> {
  const { row, zoneChanged, settleMs } = await db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
    const made = await makeMailDomain(tx, accountId, input.domain, "domain");
    return { ...made, settleMs: await applyAccountMailOf(tx, accountId) };
  });
  if (zoneChanged) await syncZoneFile(db, row.domainId);
  requestAutoSslCheck();
  await settleMail(settleMs);
  return toMailDomainRecord(db, row);
}

/**
 * A mail domain for the account's domain `name` (422 at `field` when it is not one of the
 * account's, or is one already); its site rewritten to answer for `mail.<domain>` too.
 */
async function makeMailDomain(tx: Queryable, accountId: number, name: string, field: string) {
  const [domain] = await tx.select({ id: domains.id, domain: domains.domain }).from(domains).where(and(eq(domains.domain, name), eq(domains.accountId, accountId)));
  if (!domain) throw validationError(field, `${field === "domain" ? "is" : `is in ${name}, which is`} not a domain of this account`);
  const [existing] = await tx.select({ id: mailDomains.id }).from(mailDomains).where(eq(mailDomains.domainId, domain.id));
  if (existing && field === "domain") throw validationError("domain", "is already a mail domain of this account");
  const [row] = await tx.insert(mailDomains).values({ accountId, domainId: domain.id, domain: domain.domain }).returning();
  const recordsAdded = await addMailRecords(tx, domain.id);
  // Its site answers for mail.<domain> too (AutoSSL's challenge for the mail host's certificate:
  // the caller asks for a check once this is committed).
  await syncAccountSites(tx, accountId);
  // Its DKIM key signs from the start: no mail of the domain was signed before, so there is no
  // old selector to keep verifying (a rotation publishes before it signs: rotateDkimKey).
  const key = await publishDkimKey(tx, accountId, row, "signing");
  return { row, zoneChanged: recordsAdded || key !== null };
}

/**
 * The account's mail domain of `domain` for a new address in it: one of the account's domains that
 * is not a mail domain yet becomes one (as POST …/email/domains would make it); another's domain,
 * or none, is a 422 at `field`.
 */
async function mailDomainFor(tx: Queryable, accountId: number, domain: string, field: string): Promise<{ id: number; domain: string; domainId: number; zoneChanged: boolean; made: boolean }> {
  const [row] = await tx.select().from(mailDomains).where(and(eq(mailDomains.domain, domain), eq(mailDomains.accountId, accountId)));
  if (row) return { id: row.id, domain: row.domain, domainId: row.domainId, zoneChanged: false, made: false };
  const made = await makeMailDomain(tx, accountId, domain, field);
  return { id: made.row.id, domain: made.row.domain, domainId: made.row.domainId, zoneChanged: made.zoneChanged, made: true };
}

/**
 * POST …/email/domains/{id}/dkim/rotate: a new key made on the account's machine and published in
 * the zone first (its zone file written, the change committed), and only then signing — the old
 * key retired, its record kept DKIM_RETIRED_KEEP_MS so mail signed before still verifies. A domain
 * without a key gets its first. 422 when the account's machine serves no mail (no key can be made).
 */
export async function rotateDkimKey(db: Database, accountId: number, mailDomainId: number): Promise<MailDomainRecord> {
  const published = await db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
    const [mailDomain] = await tx.select().from(mailDomains).where(and(eq(mailDomains.id, mailDomainId), eq(mailDomains.accountId, accountId)));
    if (!mailDomain) throw notFound("Mail domain");
    const key = await publishDkimKey(tx, accountId, mailDomain, "published");
    if (!key) throw validationError("id", "is a mail domain of a server that runs no mail server: it has no DKIM key to rotate");
    return { key, domainId: mailDomain.domainId };
  });
  await syncZoneFile(db, published.domainId);
  const settleMs = await db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
    const [current] = await tx.select({ id: mailDkimKeys.id }).from(mailDkimKeys).where(eq(mailDkimKeys.id, published.key.id));
    if (!current) throw notFound("Mail domain");
    // Every other key still signing (or published by a rotation that did not finish) retires now.
    await tx
      .update(mailDkimKeys)
      .set({ state: "retired", retiredAt: new Date() })
      .where(and(eq(mailDkimKeys.mailDomainId, mailDomainId), ne(mailDkimKeys.id, published.key.id), ne(mailDkimKeys.state, "retired")));
    await tx.update(mailDkimKeys).set({ state: "signing" }).where(eq(mailDkimKeys.id, published.key.id));
    return applyAccountMailOf(tx, accountId);
  });
  await settleMail(settleMs);
  const [row] = await db.select().from(mailDomains).where(and(eq(mailDomains.id, mailDomainId), eq(mailDomains.accountId, accountId)));
  if (!row) throw notFound("Mail domain");
  return toMailDomainRecord(db, row);
}

const splitAddress = (address: string) => {
  const at = address.lastIndexOf("@");
  return { localPart: address.slice(0, at), domain: address.slice(at + 1) };
};

/** The account's mailboxes as its machine names them (lib/provisioning/mail.ts): HOME/mail/<domain>/<local part>. */
export async function mailboxNamesOf(db: Queryable, accountId: number): Promise<{ localPart: string; domain: string }[]> {
  return (await db.select({ address: mailboxes.address }).from(mailboxes).where(eq(mailboxes.accountId, accountId))).map(({ address }) => splitAddress(address));
}

// ---- Mailboxes ----

const toMailboxRecord = (row: typeof mailboxes.$inferSelect, usedMb: number): MailboxRecord => ({
  id: row.id,
  address: row.address,
  quota_mb: row.quotaMb,
  used_mb: usedMb,
  enabled: row.enabled,
  created_at: row.createdAt.toISOString(),
});

/** The measured size of each of `rows`' maildirs on the account's host (0 where mail is records only), by address. */
async function usageOf(db: Queryable, accountId: number, rows: (typeof mailboxes.$inferSelect)[]): Promise<Map<string, number>> {
  if (rows.length === 0) return new Map();
  const [account] = await db.select({ username: hostingAccounts.username }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId));
  const host = await hostOfAccount(db, accountId);
  const usage = await host.run("mail.usage", { username: account.username, mailboxes: rows.map((row) => splitAddress(row.address)) });
  return new Map(usage.map((entry) => [entry.address, entry.mb]));
}

export async function listMailboxes(db: Queryable, accountId: number): Promise<MailboxRecord[]> {
  const rows = await db.select().from(mailboxes).where(eq(mailboxes.accountId, accountId)).orderBy(asc(mailboxes.id));
  const usage = await usageOf(db, accountId, rows);
  return rows.map((row) => toMailboxRecord(row, usage.get(row.address) ?? 0));
}

async function findMailbox(db: Queryable, accountId: number, id: number) {
  const [row] = await db.select().from(mailboxes).where(and(eq(mailboxes.id, id), eq(mailboxes.accountId, accountId)));
  if (!row) throw notFound("Mailbox");
  return row;
}

export async function getMailbox(db: Queryable, accountId: number, id: number): Promise<MailboxRecord> {
  const row = await findMailbox(db, accountId, id);
  return toMailboxRecord(row, (await usageOf(db, accountId, [row])).get(row.address) ?? 0);
}

/** 422 at quota_mb when the account's mailboxes (but `exceptId`) and `quotaMb` would pass the plan's mail_quota_mb. */
async function assertMailQuota(tx: Queryable, accountId: number, limit: number | null, quotaMb: number, exceptId: number | null): Promise<void> {
  if (limit === null) return;
  const [{ total }] = await tx
    .select({ total: sum(mailboxes.quotaMb).mapWith(Number) })
    .from(mailboxes)
    .where(and(eq(mailboxes.accountId, accountId), exceptId === null ? undefined : ne(mailboxes.id, exceptId)));
  const others = total ?? 0;
  if (others + quotaMb > limit) {
    throw validationError("quota_mb", `would bring the account's mailboxes to ${others + quotaMb} MB; the plan allows ${limit} MB in all (${Math.max(0, limit - others)} MB left)`);
  }
}

const lockAddresses = (tx: Queryable) => tx.execute(sql`select pg_advisory_xact_lock(${MAIL_ADDRESSES_LOCK})`);

export async function createMailbox(db: Database, accountId: number, input: z.output<typeof createMailboxBodySchema>): Promise<MailboxRecord> {
  // The hash first, outside the transaction: it is the slow part (lib/provisioning/mail-password.ts).
  const { password, ...fields } = input;
  return createMailboxWithHash(db, accountId, { ...fields, passwordHash: mailboxPasswordHash(password) });
}

/**
 * A mailbox with its password given as the hash (a restore, lib/backups/restore-account.ts: the
 * hash from the backup's records, checked there as the renderer checks it); the same rules as a
 * customer's POST otherwise.
 */
export async function createMailboxWithHash(db: Database, accountId: number, input: Omit<z.output<typeof createMailboxBodySchema>, "password"> & { passwordHash: string }): Promise<MailboxRecord> {
  const { passwordHash } = input;
  const { row, domainId, zoneChanged, madeMailDomain, settleMs } = await db.transaction(async (tx) => {
    const { plan } = await lockAccount(tx, accountId);
    await lockAddresses(tx);
    const { localPart, domain } = splitAddress(input.address);
    const mailDomain = await mailDomainFor(tx, accountId, domain, "address");
    const [{ used }] = await tx.select({ used: sql<number>`count(*)::int` }).from(mailboxes).where(eq(mailboxes.accountId, accountId));
    assertQuota(used, plan.mailboxes, "mailboxes");
    await assertMailQuota(tx, accountId, plan.mailQuotaMb, input.quota_mb, null);
    const [taken] = await tx.select({ id: mailboxes.id }).from(mailboxes).where(eq(mailboxes.address, input.address));
    if (taken) throw validationError("address", "is already a mailbox");
    const [alias] = await tx.select({ id: mailAliases.id }).from(mailAliases).where(eq(mailAliases.address, input.address));
    if (alias) throw validationError("address", "is already an alias: remove the alias first");
    const [row] = await tx
      .insert(mailboxes)
      .values({ accountId, mailDomainId: mailDomain.id, localPart, address: input.address, passwordHash, quotaMb: input.quota_mb, enabled: input.enabled })
      .returning();
    return { row, domainId: mailDomain.domainId, zoneChanged: mailDomain.zoneChanged, madeMailDomain: mailDomain.made, settleMs: await applyAccountMailOf(tx, accountId) };
  });
  if (zoneChanged) await syncZoneFile(db, domainId);
  if (madeMailDomain) requestAutoSslCheck();
  await settleMail(settleMs);
  return toMailboxRecord(row, 0);
}

export async function updateMailbox(db: Database, accountId: number, id: number, input: z.output<typeof updateMailboxBodySchema>): Promise<MailboxRecord> {
  const passwordHash = input.password === undefined ? undefined : mailboxPasswordHash(input.password);
  const { row, settleMs } = await db.transaction(async (tx) => {
    const { plan } = await lockAccount(tx, accountId);
    await findMailbox(tx, accountId, id);
    if (input.quota_mb !== undefined) await assertMailQuota(tx, accountId, plan.mailQuotaMb, input.quota_mb, id);
    const [row] = await tx
      .update(mailboxes)
      .set({ passwordHash, quotaMb: input.quota_mb, enabled: input.enabled })
      .where(and(eq(mailboxes.id, id), eq(mailboxes.accountId, accountId)))
      .returning();
    return { row, settleMs: await applyAccountMailOf(tx, accountId) };
  });
  await settleMail(settleMs);
  return toMailboxRecord(row, (await usageOf(db, accountId, [row])).get(row.address) ?? 0);
}

export async function deleteMailbox(db: Database, accountId: number, id: number): Promise<{ message: string }> {
  const { address, settleMs } = await db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
    const [row] = await tx.delete(mailboxes).where(and(eq(mailboxes.id, id), eq(mailboxes.accountId, accountId))).returning({ address: mailboxes.address });
    if (!row) throw notFound("Mailbox");
    return { address: row.address, settleMs: await applyAccountMailOf(tx, accountId) };
  });
  await settleMail(settleMs);
  return { message: `Mailbox ${address} removed; its maildir remains in the home directory` };
}

// ---- Aliases ----

const toAliasRecord = (row: typeof mailAliases.$inferSelect): AliasRecord => ({ id: row.id, address: row.address, targets: row.targets });

export async function listAliases(db: Queryable, accountId: number): Promise<AliasRecord[]> {
  const rows = await db.select().from(mailAliases).where(eq(mailAliases.accountId, accountId)).orderBy(asc(mailAliases.id));
  return rows.map(toAliasRecord);
}

/** How many alias steps a chain may take before the panel calls it a loop (Postfix stops at 1000 recipients, and at 100 hops). */
const MAX_ALIAS_DEPTH = 20;

/**
 * 422 at targets when the new alias `address` → `targets` would send mail around in a circle:
 * following each target as Postfix resolves it — an alias's own targets, a mailbox (the end), else
 * its domain's catch-all, else the end (another server's, or unknown) — reaches `address` again.
 * Across all accounts (an alias may name another account's address), under MAIL_ADDRESSES_LOCK.
 */
async function assertNoLoop(tx: Queryable, address: string, targets: string[]): Promise<void> {
  const seen = new Set<string>();
  let frontier = targets;
  for (let depth = 0; frontier.length > 0; depth++) {
    if (frontier.includes(address)) throw validationError("targets", `make a loop: mail to ${address} would come back to ${address}`);
    if (depth >= MAX_ALIAS_DEPTH) throw validationError("targets", `make a chain of aliases longer than ${MAX_ALIAS_DEPTH}`);
    const fresh = [...new Set(frontier)].filter((item) => !seen.has(item));
    for (const item of fresh) seen.add(item);
    if (fresh.length === 0) return;
    const catchAlls = [...new Set(fresh.map((item) => `@${splitAddress(item).domain}`))];
    const [aliasRows, mailboxRows, catchAllRows] = await Promise.all([
      tx.select({ address: mailAliases.address, targets: mailAliases.targets }).from(mailAliases).where(inArray(mailAliases.address, fresh)),
      tx.select({ address: mailboxes.address }).from(mailboxes).where(inArray(mailboxes.address, fresh)),
      tx.select({ address: mailAliases.address, targets: mailAliases.targets }).from(mailAliases).where(inArray(mailAliases.address, catchAlls)),
    ]);
    const aliasTargets = new Map(aliasRows.map((row) => [row.address, row.targets]));
    const catchAllTargets = new Map(catchAllRows.map((row) => [row.address, row.targets]));
    // The new alias as if it were stored: a catch-all being made catches too.
    if (address.startsWith("@")) catchAllTargets.set(address, targets);
    const isMailbox = new Set(mailboxRows.map((row) => row.address));
    const next: string[] = [];
    for (const item of fresh) {
      if (isMailbox.has(item)) continue;
      const exact = aliasTargets.get(item);
      if (exact) {
        next.push(...exact);
        continue;
      }
      const catchAll = `@${splitAddress(item).domain}`;
      const caught = catchAllTargets.get(catchAll);
      if (caught) next.push(...(catchAll === address ? [address] : caught));
    }
    frontier = next;
  }
}

/**
 * 422 at targets for a target in one of the account's own mail domains that goes nowhere (no
 * mailbox, no alias, no catch-all): Postfix would refuse it at once. Others' domains are not
 * looked into (their addresses are theirs to know).
 */
async function assertLocalTargetsExist(tx: Queryable, accountId: number, address: string, targets: string[]): Promise<void> {
  const ownDomains = new Set((await tx.select({ domain: mailDomains.domain }).from(mailDomains).where(eq(mailDomains.accountId, accountId))).map((row) => row.domain));
  const local = targets.filter((item) => ownDomains.has(splitAddress(item).domain));
  if (local.length === 0) return;
  const catchAlls = [...new Set(local.map((item) => `@${splitAddress(item).domain}`))];
  const [known, knownAliases] = await Promise.all([
    tx.select({ address: mailboxes.address }).from(mailboxes).where(inArray(mailboxes.address, local)),
    tx.select({ address: mailAliases.address }).from(mailAliases).where(inArray(mailAliases.address, [...local, ...catchAlls])),
  ]);
  const exists = new Set([...known, ...knownAliases].map((row) => row.address));
  if (address.startsWith("@")) exists.add(address);
  const nowhere = local.find((item) => !exists.has(item) && !exists.has(`@${splitAddress(item).domain}`));
  if (nowhere) throw validationError("targets", `name ${nowhere}, which is no mailbox or alias of this account`);
}

export async function createAlias(db: Database, accountId: number, input: z.output<typeof createAliasBodySchema>): Promise<AliasRecord> {
  const { row, domainId, zoneChanged, madeMailDomain, settleMs } = await db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
    await lockAddresses(tx);
    const { localPart, domain } = splitAddress(input.address);
    const mailDomain = await mailDomainFor(tx, accountId, domain, "address");
    const [taken] = await tx.select({ id: mailAliases.id }).from(mailAliases).where(eq(mailAliases.address, input.address));
    if (taken) throw validationError("address", localPart === "" ? "already has a catch-all" : "is already an alias");
    const [mailbox] = await tx.select({ id: mailboxes.id }).from(mailboxes).where(eq(mailboxes.address, input.address));
    if (mailbox) throw validationError("address", "is a mailbox: an alias of that address would take its mail");
    await assertLocalTargetsExist(tx, accountId, input.address, input.targets);
    await assertNoLoop(tx, input.address, input.targets);
    const [row] = await tx.insert(mailAliases).values({ accountId, mailDomainId: mailDomain.id, localPart, address: input.address, targets: input.targets }).returning();
    return { row, domainId: mailDomain.domainId, zoneChanged: mailDomain.zoneChanged, madeMailDomain: mailDomain.made, settleMs: await applyAccountMailOf(tx, accountId) };
  });
  if (zoneChanged) await syncZoneFile(db, domainId);
  if (madeMailDomain) requestAutoSslCheck();
  await settleMail(settleMs);
  return toAliasRecord(row);
}

export async function deleteAlias(db: Database, accountId: number, id: number): Promise<{ message: string }> {
  return db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
    const [row] = await tx.delete(mailAliases).where(and(eq(mailAliases.id, id), eq(mailAliases.accountId, accountId))).returning({ address: mailAliases.address });
    if (!row) throw notFound("Alias");
    // Aliases are Postfix's alone, and Postfix reloads before this answers: nothing to wait for.
    await applyAccountMailOf(tx, accountId);
    return { message: `Alias ${row.address} removed` };
  });
}
