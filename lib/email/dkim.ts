import { createHash, randomBytes } from "node:crypto";
import { and, asc, eq, inArray, lt, ne } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { dnsRecords, mailDkimKeys, mailDomains } from "@/db/schema";
import { syncZoneFile } from "@/lib/dns/zone-file-sync";
import { bumpSerial, DEFAULT_TTL, lockZone } from "@/lib/dns/zone";
import { type Host, hostOfAccount } from "@/lib/nodes/hosts";
import type { DkimState } from "@/lib/provisioning/mail";

// DKIM keys of mail domains (docs/email.md "DKIM"). The private key is made on the machine that
// hosts the account and stays there (lib/provisioning/mail.ts makeDkimKey); the panel keeps the
// public key and publishes it in the domain's zone as `<selector>._domainkey` TXT. A key's state:
// "published" (in the zone, not signing yet), "signing" (rspamd signs the domain's mail with it),
// "retired" (signs no more; its record stays DKIM_RETIRED_KEEP_MS after retired_at, so mail signed
// with it before the rotation still verifies, then sweepRetiredDkimKeys takes it out).

/** How long a retired key stays published. */
export const DKIM_RETIRED_KEEP_MS = 7 * 24 * 3600 * 1000;

export type DkimKeyRow = typeof mailDkimKeys.$inferSelect;

/** A new selector: `s` + the day + 8 hex digits (a DNS label; unique per domain, never reused). */
export const newDkimSelector = (now = new Date()) => `s${now.toISOString().slice(0, 10).replaceAll("-", "")}${randomBytes(4).toString("hex")}`;

/** The zone's TXT for a key (the zone renderer splits it into 255-byte strings: a 2048-bit key's is ~410). */
export const dkimTxtContent = (publicKey: string) => `v=DKIM1; k=rsa; p=${publicKey}`;
export const dkimRecordName = (selector: string) => `${selector}._domainkey`;

/**
 * A new key for the mail domain, made on the account's machine and published in its zone, in
 * `state`; null when the machine serves no mail (MAIL_SERVER off there: no key, nothing signs).
 * The caller syncs the zone file after its transaction.
 */
export async function publishDkimKey(
  tx: Queryable,
  accountId: number,
  mailDomain: { id: number; domain: string; domainId: number },
  state: "published" | "signing",
): Promise<DkimKeyRow | null> {
  const selector = newDkimSelector();
  const host = await hostOfAccount(tx, accountId);
  const { public_key: publicKey } = await host.run("mail.dkim-key", { domain: mailDomain.domain, selector });
  if (publicKey === null) return null;
  return insertDkimKey(tx, mailDomain, selector, publicKey, state);
}

/** The key's row and its TXT record in the domain's zone (the caller syncs the zone file after its transaction). */
async function insertDkimKey(tx: Queryable, mailDomain: { id: number; domainId: number }, selector: string, publicKey: string, state: "published" | "signing"): Promise<DkimKeyRow> {
  const zone = await lockZone(tx, mailDomain.domainId);
  const [row] = await tx.insert(mailDkimKeys).values({ mailDomainId: mailDomain.id, selector, publicKey, state }).returning();
  await tx.insert(dnsRecords).values({ domainId: mailDomain.domainId, name: dkimRecordName(selector), type: "TXT", content: dkimTxtContent(publicKey), ttl: DEFAULT_TTL });
  await bumpSerial(tx, zone);
  return row;
}

// ---- Moves (docs/email.md "Backups, restores and moves") ----
//
// A move does not carry a private key: the target makes a key of its own for each mail domain,
// published while the source still signs with the old one (the move's "preparing" step), and it
// signs from the switch on, in the switch's transaction — a rotation, made by the move, so the
// domain is never served unsigned and no private key ever travels (not through the panel, not
// between nodes: docs/security.md "Nodes are not trusted").

/**
 * The selector of the key `move` makes on its target for `domain`: the same at every attempt of
 * the step, so a step run again finds the key it made (on the target: makeDkimKey answers an
 * existing key again; here: its row) and makes no second one.
 */
export function moveDkimSelector(move: { id: number; createdAt: Date }, domain: string): string {
  const digest = createHash("sha256").update(`move ${move.id} ${domain}`).digest("hex").slice(0, 8);
  return `s${move.createdAt.toISOString().slice(0, 10).replaceAll("-", "")}${digest}`;
}

/**
 * Each of the account's mail domains gets a key made on the move's `target`, published (not
 * signing yet), its record in the zone file. Domains whose target serves no mail get none.
 */
export async function publishMoveDkimKeys(db: Database, accountId: number, move: { id: number; createdAt: Date }, target: Host): Promise<void> {
  const rows = await db.select().from(mailDomains).where(eq(mailDomains.accountId, accountId)).orderBy(asc(mailDomains.id));
  for (const mailDomain of rows) {
    const selector = moveDkimSelector(move, mailDomain.domain);
    const [made] = await db.select({ id: mailDkimKeys.id }).from(mailDkimKeys).where(and(eq(mailDkimKeys.mailDomainId, mailDomain.id), eq(mailDkimKeys.selector, selector)));
    if (made) continue;
    const { public_key: publicKey } = await target.run("mail.dkim-key", { domain: mailDomain.domain, selector });
    if (publicKey === null) continue;
    await db.transaction((tx) => insertDkimKey(tx, mailDomain, selector, publicKey, "published"));
    await syncZoneFile(db, mailDomain.domainId);
  }
}

/**
 * The switch (in its transaction): each mail domain whose move key is still published signs with
 * it, and its other keys retire (their records kept DKIM_RETIRED_KEEP_MS, as a rotation's). A
 * domain rotated during the move (its move key retired by that rotation) keeps the rotation's key.
 */
export async function signWithMoveKeys(tx: Queryable, accountId: number, move: { id: number; createdAt: Date }): Promise<void> {
  for (const key of await moveKeysOf(tx, accountId, move)) {
    await tx.update(mailDkimKeys).set({ state: "retired", retiredAt: new Date() }).where(and(eq(mailDkimKeys.mailDomainId, key.mailDomainId), ne(mailDkimKeys.id, key.id), ne(mailDkimKeys.state, "retired")));
    await tx.update(mailDkimKeys).set({ state: "signing" }).where(eq(mailDkimKeys.id, key.id));
  }
}

/** The keys `move` published that have not signed yet, with their domains: what the target signs with once it serves. */
export async function moveKeysOf(db: Queryable, accountId: number, move: { id: number; createdAt: Date }) {
  const rows = await db
    .select({ id: mailDkimKeys.id, mailDomainId: mailDkimKeys.mailDomainId, selector: mailDkimKeys.selector, domain: mailDomains.domain, publicKey: mailDkimKeys.publicKey, domainId: mailDomains.domainId })
    .from(mailDkimKeys)
    .innerJoin(mailDomains, eq(mailDomains.id, mailDkimKeys.mailDomainId))
    .where(and(eq(mailDomains.accountId, accountId), eq(mailDkimKeys.state, "published")));
  return rows.filter((row) => row.selector === moveDkimSelector(move, row.domain));
}

/** A cancelled move: the keys it published on its target leave the zones (their private keys go with the target's copy). */
export async function unpublishMoveDkimKeys(db: Database, accountId: number, move: { id: number; createdAt: Date }): Promise<void> {
  const zones = await db.transaction(async (tx) => unpublish(tx, await moveKeysOf(tx, accountId, move)));
  for (const domainId of zones) await syncZoneFile(db, domainId);
}

/** The keys the account's mail domains sign with, by account, as lib/provisioning/mail.ts takes them. */
export async function signingKeysOf(db: Queryable, accountIds: number[]): Promise<Map<number, DkimState[]>> {
  const keys = new Map<number, DkimState[]>(accountIds.map((id) => [id, []]));
  if (accountIds.length === 0) return keys;
  const rows = await db
    .select({ accountId: mailDomains.accountId, domain: mailDomains.domain, selector: mailDkimKeys.selector })
    .from(mailDkimKeys)
    .innerJoin(mailDomains, eq(mailDomains.id, mailDkimKeys.mailDomainId))
    .where(and(inArray(mailDomains.accountId, accountIds), eq(mailDkimKeys.state, "signing")))
    .orderBy(asc(mailDkimKeys.id));
  for (const { accountId, ...key } of rows) keys.get(accountId)!.push(key);
  return keys;
}

/** The mail domain's keys, oldest first. */
export async function dkimKeysOf(db: Queryable, mailDomainId: number): Promise<DkimKeyRow[]> {
  return db.select().from(mailDkimKeys).where(eq(mailDkimKeys.mailDomainId, mailDomainId)).orderBy(asc(mailDkimKeys.id));
}

/** Takes `keys`' TXT records out of their zones (the record of exactly that key) and the keys' rows; returns the zones changed. */
async function unpublish(tx: Queryable, keys: { id: number; selector: string; publicKey: string; domainId: number }[]): Promise<number[]> {
  const zones = new Set<number>();
  for (const key of keys) {
    const zone = await lockZone(tx, key.domainId);
    await tx
      .delete(dnsRecords)
      .where(and(eq(dnsRecords.domainId, key.domainId), eq(dnsRecords.name, dkimRecordName(key.selector)), eq(dnsRecords.type, "TXT"), eq(dnsRecords.content, dkimTxtContent(key.publicKey))));
    await tx.delete(mailDkimKeys).where(eq(mailDkimKeys.id, key.id));
    if (!zones.has(zone.id)) await bumpSerial(tx, zone);
    zones.add(zone.id);
  }
  return [...zones];
}

/**
 * Retired keys whose DKIM_RETIRED_KEEP_MS are over leave their zones (every account; the mail
 * job runs it hourly, lib/email/jobs.ts). Returns how many went.
 */
export async function sweepRetiredDkimKeys(db: Database, now = new Date()): Promise<number> {
  const zones = await db.transaction(async (tx) => {
    const expired = await tx
      .select({ id: mailDkimKeys.id, selector: mailDkimKeys.selector, publicKey: mailDkimKeys.publicKey, domainId: mailDomains.domainId })
      .from(mailDkimKeys)
      .innerJoin(mailDomains, eq(mailDomains.id, mailDkimKeys.mailDomainId))
      .where(and(eq(mailDkimKeys.state, "retired"), lt(mailDkimKeys.retiredAt, new Date(now.getTime() - DKIM_RETIRED_KEEP_MS))))
      .orderBy(asc(mailDomains.domainId), asc(mailDkimKeys.id));
    return { count: expired.length, changed: await unpublish(tx, expired) };
  });
  for (const domainId of zones.changed) await syncZoneFile(db, domainId);
  return zones.count;
}
