import { and, asc, eq, gt, inArray, type SQL, sql } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { preparedQuery } from "@/db/prepared";
import { dnsRecords, domains, hostingAccounts, nodes } from "@/db/schema";
import { env } from "@/lib/env";
import { notFound } from "@/lib/errors";

// A domain's zone lives in dns_records; its SOA serial (YYYYMMDDnn) in domains.soa_serial and in
// the SOA record's content. Every change of a zone locks it (lockZone) and goes through
// bumpSerial in the same transaction.

export const DEFAULT_TTL = 3600;

/** The next serial: today's first (YYYYMMDD00) or one more than the current, whichever is larger. */
export function nextSerial(current: number, now = new Date()): number {
  const today = Number(now.toISOString().slice(0, 10).replaceAll("-", "")) * 100;
  return Math.max(current + 1, today);
}

function soaContent(domain: string, serial: number): string {
  const [primary] = env().nameservers;
  return `${primary}. hostmaster.${domain}. ${serial} 3600 900 1209600 300`;
}

/**
 * The address a domain's apex points to: the IPv4 of the node that hosts its account
 * (docs/nodes.md "What runs where, and what does not yet"); the panel's own machine's (SERVER_IPV4)
 * for `local` without one.
 */
async function apexAddressOf(db: Queryable, domainId: number): Promise<string> {
  const [row] = await db
    .select({ ipv4: nodes.ipv4 })
    .from(domains)
    .innerJoin(hostingAccounts, eq(hostingAccounts.id, domains.accountId))
    .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
    .where(eq(domains.id, domainId));
  return row?.ipv4 ?? env().serverIpv4;
}

/** A new zone: SOA, the two name servers, and an A record for the apex at its node's address. */
export async function createZone(db: Queryable, domain: { id: number; domain: string; soaSerial: number }) {
  const { nameservers } = env();
  const serverIpv4 = await apexAddressOf(db, domain.id);
  await db.insert(dnsRecords).values([
    { domainId: domain.id, name: "@", type: "SOA", content: soaContent(domain.domain, domain.soaSerial), ttl: DEFAULT_TTL },
    ...nameservers.map((ns) => ({ domainId: domain.id, name: "@", type: "NS" as const, content: ns, ttl: DEFAULT_TTL })),
    { domainId: domain.id, name: "@", type: "A", content: serverIpv4, ttl: DEFAULT_TTL },
  ]);
}

/** A zone's records, SOA included, in the order they were created. */
export const zoneRecords = preparedQuery((db) =>
  db
    .select()
    .from(dnsRecords)
    .where(eq(dnsRecords.domainId, sql.placeholder("domainId")))
    .orderBy(asc(dnsRecords.id))
    .prepare("zone_records"),
);

/** A zone's domain row, locked for the rest of the transaction (lockZone, lockZoneOfRecord). */
export interface LockedZone {
  id: number;
  domain: string;
  soaSerial: number;
}

const lockedZoneColumns = { id: domains.id, domain: domains.domain, soaSerial: domains.soaSerial };

/**
 * Locks the zone's domain row for the rest of the transaction (404 if it was deleted meanwhile).
 * Every change of a zone takes it before reading what it checks, so two concurrent changes at one
 * name are checked one after the other, and serials stay monotonic.
 */
export async function lockZone(tx: Queryable, domainId: number): Promise<LockedZone> {
  const [zone] = await tx.select(lockedZoneColumns).from(domains).where(eq(domains.id, domainId)).for("update");
  if (!zone) throw notFound("Domain");
  return zone;
}

/** Locks the zone of one of the account's records; null when the account has no such record. */
export async function lockZoneOfRecord(tx: Queryable, accountId: number, recordId: number): Promise<LockedZone | null> {
  const [zone] = await tx
    .select(lockedZoneColumns)
    .from(dnsRecords)
    .innerJoin(domains, eq(domains.id, dnsRecords.domainId))
    .where(and(eq(dnsRecords.id, recordId), eq(domains.accountId, accountId)))
    .for("update", { of: domains });
  return zone ?? null;
}

/** Bumps the serial of a zone locked in this transaction; returns it. */
export async function bumpSerial(tx: Queryable, zone: LockedZone): Promise<number> {
  const serial = nextSerial(zone.soaSerial);
  await tx.update(domains).set({ soaSerial: serial }).where(eq(domains.id, zone.id));
  await tx
    .update(dnsRecords)
    .set({ content: soaContent(zone.domain, serial) })
    .where(and(eq(dnsRecords.domainId, zone.id), eq(dnsRecords.type, "SOA")));
  return serial;
}

/**
 * A node's address changed (docs/nodes.md "Admin API, command line and UI"): the apex A records of
 * its accounts' zones that pointed to the old one point to the new one, each zone's serial bumped.
 * The domains whose zones changed, for their zone files to be written once the change is committed.
 */
export async function moveApexRecords(tx: Queryable, nodeId: number, from: string, to: string): Promise<number[]> {
  return repointRecords(tx, and(eq(hostingAccounts.nodeId, nodeId), eq(dnsRecords.name, "@"))!, from, to);
}

/**
 * An account moved to another node (docs/nodes.md "Moving accounts"): every A record of its zones
 * that pointed to the old node's address points to the new one's. The domains whose zones changed.
 */
export async function moveAccountRecords(tx: Queryable, accountId: number, from: string, to: string): Promise<number[]> {
  return repointRecords(tx, eq(hostingAccounts.id, accountId), from, to);
}

async function repointRecords(tx: Queryable, which: SQL, from: string, to: string): Promise<number[]> {
  const pointing = await tx
    .select({ id: dnsRecords.id, domainId: dnsRecords.domainId })
    .from(dnsRecords)
    .innerJoin(domains, eq(domains.id, dnsRecords.domainId))
    .innerJoin(hostingAccounts, eq(hostingAccounts.id, domains.accountId))
    .where(and(which, eq(dnsRecords.type, "A"), eq(dnsRecords.content, from)));
  const zones = [...new Set(pointing.map((record) => record.domainId))];
  for (const domainId of zones) {
    const zone = await lockZone(tx, domainId);
    const records = pointing.filter((record) => record.domainId === domainId).map((record) => record.id);
    await tx.update(dnsRecords).set({ content: to }).where(inArray(dnsRecords.id, records));
    await bumpSerial(tx, zone);
  }
  return zones;
}

/**
 * A move is queued (docs/nodes.md "Moving accounts"): the records of the account's zones that
 * resolvers cache with the source's address — its A records naming `address` — get the short
 * TTL `ttl` where theirs is longer, each zone's serial bumped. (AAAA records join once nodes have
 * an IPv6 address, MX records once mail exists: the same lowering, by type.) The TTL each lowered
 * record had (record id → seconds), and the domains whose zones changed (their files are written
 * once the change is committed).
 */
export async function lowerAccountTtls(tx: Queryable, accountId: number, address: string, ttl: number): Promise<{ lowered: Record<string, number>; zones: number[] }> {
  const cached = await tx
    .select({ id: dnsRecords.id, domainId: dnsRecords.domainId, ttl: dnsRecords.ttl })
    .from(dnsRecords)
    .innerJoin(domains, eq(domains.id, dnsRecords.domainId))
    .where(and(eq(domains.accountId, accountId), eq(dnsRecords.type, "A"), eq(dnsRecords.content, address), gt(dnsRecords.ttl, ttl)))
    .orderBy(asc(dnsRecords.id));
  const zones = [...new Set(cached.map((record) => record.domainId))];
  const lowered: Record<string, number> = {};
  const changed: number[] = [];
  for (const domainId of zones) {
    const zone = await lockZone(tx, domainId);
    // Read again under the zone's lock: a change that committed meanwhile is what is lowered.
    const records = await tx
      .update(dnsRecords)
      .set({ ttl })
      .where(and(inArray(dnsRecords.id, cached.filter((record) => record.domainId === domainId).map((record) => record.id)), eq(dnsRecords.content, address), gt(dnsRecords.ttl, ttl)))
      .returning({ id: dnsRecords.id });
    for (const record of records) lowered[String(record.id)] = cached.find((row) => row.id === record.id)!.ttl;
    if (records.length) {
      await bumpSerial(tx, zone);
      changed.push(domainId);
    }
  }
  return { lowered, zones: changed };
}

/**
 * The move has ended: each record it lowered gets its old TTL back — if it still has the short
 * TTL `ttl` (a record the customer changed meanwhile keeps what they set, and a record deleted
 * meanwhile is simply gone), each changed zone's serial bumped. The domains whose zones changed.
 */
export async function restoreRecordTtls(tx: Queryable, saved: Record<string, number>, ttl: number): Promise<number[]> {
  const ids = Object.keys(saved).map(Number).filter(Number.isInteger);
  if (ids.length === 0) return [];
  const short = await tx
    .select({ id: dnsRecords.id, domainId: dnsRecords.domainId })
    .from(dnsRecords)
    .where(and(inArray(dnsRecords.id, ids), eq(dnsRecords.ttl, ttl)))
    .orderBy(asc(dnsRecords.id));
  const zones = [...new Set(short.map((record) => record.domainId))];
  const changed: number[] = [];
  for (const domainId of zones) {
    const zone = await lockZone(tx, domainId);
    let any = false;
    for (const record of short.filter((row) => row.domainId === domainId)) {
      const restored = await tx
        .update(dnsRecords)
        .set({ ttl: saved[String(record.id)] })
        .where(and(eq(dnsRecords.id, record.id), eq(dnsRecords.ttl, ttl)))
        .returning({ id: dnsRecords.id });
      any ||= restored.length > 0;
    }
    if (any) {
      await bumpSerial(tx, zone);
      changed.push(domainId);
    }
  }
  return changed;
}
