import { and, eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { dnsRecords, domains } from "@/db/schema";
import { env } from "@/lib/env";

// A domain's zone lives in dns_records; its SOA serial (YYYYMMDDnn) in domains.soa_serial and in
// the SOA record's content. Every change of a zone goes through bumpSerial in the same
// transaction.

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

/** A new zone: SOA, the two name servers, and an A record for the apex. */
export async function createZone(db: Queryable, domain: { id: number; domain: string; soaSerial: number }) {
  const { nameservers, serverIpv4 } = env();
  await db.insert(dnsRecords).values([
    { domainId: domain.id, name: "@", type: "SOA", content: soaContent(domain.domain, domain.soaSerial), ttl: DEFAULT_TTL },
    ...nameservers.map((ns) => ({ domainId: domain.id, name: "@", type: "NS" as const, content: ns, ttl: DEFAULT_TTL })),
    { domainId: domain.id, name: "@", type: "A", content: serverIpv4, ttl: DEFAULT_TTL },
  ]);
}

/** Bumps the zone's serial (row locked, so concurrent changes stay monotonic); returns it. */
export async function bumpSerial(db: Queryable, domainId: number): Promise<number> {
  const [domain] = await db
    .select({ domain: domains.domain, soaSerial: domains.soaSerial })
    .from(domains)
    .where(eq(domains.id, domainId))
    .for("update");
  const serial = nextSerial(domain.soaSerial);
  await db.update(domains).set({ soaSerial: serial }).where(eq(domains.id, domainId));
  await db
    .update(dnsRecords)
    .set({ content: soaContent(domain.domain, serial) })
    .where(and(eq(dnsRecords.domainId, domainId), eq(dnsRecords.type, "SOA")));
  return serial;
}
