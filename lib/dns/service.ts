import { and, count, eq, ne, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { preparedQuery } from "@/db/prepared";
import { dnsRecords, domains } from "@/db/schema";
import { assertQuota, lockAccount } from "@/lib/accounts/lock";
import { AppError, notFound, validationError } from "@/lib/errors";
import type { createDnsRecordBodySchema, dnsRecordChangeSchema, dnsRecordSchema, updateDnsRecordBodySchema } from "./schemas";
import { relativeRecordName, validateRecordContent } from "./validate";
import { bumpSerial, lockZone, lockZoneOfRecord, zoneRecords } from "./zone";
import { syncZoneFile, type ZoneWarning } from "./zone-file-sync";

export type DnsRecord = z.infer<typeof dnsRecordSchema>;
/** A created or changed record, with a `warning` when its zone file could not follow. */
export type DnsRecordChange = z.infer<typeof dnsRecordChangeSchema>;

/** SOA records are the panel's: a client can neither create one nor turn a record into one. */
function assertNotSoa<Type extends string>(type: Type | undefined, action: string): asserts type is Exclude<Type, "SOA"> {
  if (type === "SOA") throw new AppError("FORBIDDEN", `SOA records cannot be ${action}: the panel manages them`);
}
type RecordRow = typeof dnsRecords.$inferSelect;

const toRecord = (row: RecordRow): DnsRecord => ({
  id: row.id,
  domain_id: row.domainId,
  name: row.name,
  type: row.type,
  content: row.content,
  ttl: row.ttl,
  priority: row.priority,
  weight: row.weight,
  port: row.port,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
});

const ownedDomain = preparedQuery((db) =>
  db
    .select({ id: domains.id, domain: domains.domain })
    .from(domains)
    .where(and(eq(domains.id, sql.placeholder("domainId")), eq(domains.accountId, sql.placeholder("accountId"))))
    .prepare("owned_domain"),
);

/** One of the account's zones (404 for another account's, so existence never leaks). */
async function findOwnedDomain(db: Queryable, accountId: number, domainId: number) {
  const [domain] = await ownedDomain(db).execute({ accountId, domainId });
  if (!domain) throw notFound("Domain");
  return domain;
}

async function findOwnedRecord(db: Queryable, accountId: number, id: number) {
  const [row] = await db
    .select({ record: dnsRecords })
    .from(dnsRecords)
    .innerJoin(domains, eq(domains.id, dnsRecords.domainId))
    .where(and(eq(dnsRecords.id, id), eq(domains.accountId, accountId)));
  if (!row) throw notFound("DNS record");
  return row.record;
}

/**
 * Locks the zone of one of the account's records, then reads the record: under the lock, so no
 * concurrent change of the zone slips in between (a record's zone never changes).
 */
async function lockOwnedRecord(tx: Queryable, accountId: number, id: number) {
  const zone = await lockZoneOfRecord(tx, accountId, id);
  if (!zone) throw notFound("DNS record");
  const [record] = await tx.select().from(dnsRecords).where(eq(dnsRecords.id, id));
  if (!record) throw notFound("DNS record");
  return { zone, record };
}

type RecordValues = Pick<RecordRow, "domainId" | "name" | "type" | "content" | "priority" | "weight" | "port">;

/**
 * The zone's rules at one name, checked with the zone locked: a CNAME stands alone (no other record
 * beside it, no CNAME beside anything), and a record identical to another one (same name, type,
 * content and, where the type uses them, priority, weight and port) is refused.
 */
async function assertZoneRules(tx: Queryable, record: RecordValues, exceptId: number | null) {
  const others = await tx
    .select()
    .from(dnsRecords)
    .where(
      and(
        eq(dnsRecords.domainId, record.domainId),
        eq(dnsRecords.name, record.name),
        exceptId === null ? undefined : ne(dnsRecords.id, exceptId),
      ),
    );
  if (record.type === "CNAME" && others.length > 0) {
    throw validationError("type", `a CNAME cannot stand beside other records at "${record.name}"`);
  }
  if (record.type !== "CNAME" && others.some((other) => other.type === "CNAME")) {
    throw validationError("name", `"${record.name}" already has a CNAME record, which must stand alone`);
  }
  const identical = others.some((other) =>
    (["type", "content", "priority", "weight", "port"] as const).every((field) => other[field] === record[field]),
  );
  if (identical) throw validationError("content", `an identical ${record.type} record already exists at "${record.name}"`);
}

async function countAccountRecords(tx: Queryable, accountId: number): Promise<number> {
  const [{ total }] = await tx
    .select({ total: count() })
    .from(dnsRecords)
    .innerJoin(domains, eq(domains.id, dnsRecords.domainId))
    .where(and(eq(domains.accountId, accountId), ne(dnsRecords.type, "SOA")));
  return total;
}

/** GET /api/client/dns-records?domain_id=: the zone's records, SOA included. */
export async function listDnsRecords(db: Queryable, accountId: number, domainId: number): Promise<DnsRecord[]> {
  await findOwnedDomain(db, accountId, domainId);
  const rows = await zoneRecords(db).execute({ domainId });
  return rows.map(toRecord);
}

export async function getDnsRecordOrThrow(db: Queryable, { accountId, id }: { accountId: number; id: number }) {
  return toRecord(await findOwnedRecord(db, accountId, id));
}

export async function createDnsRecord(
  db: Database,
  accountId: number,
  input: z.output<typeof createDnsRecordBodySchema>,
): Promise<DnsRecordChange> {
  const row = await db.transaction(async (tx) => {
    const domain = await findOwnedDomain(tx, accountId, input.domain_id);
    assertNotSoa(input.type, "created");
    const { plan } = await lockAccount(tx, accountId);
    assertQuota(await countAccountRecords(tx, accountId), plan.maxDnsRecords, "DNS records");
    const name = relativeRecordName(domain.domain, input.name);
    const fields = validateRecordContent({ ...input, type: input.type });
    const zone = await lockZone(tx, domain.id);
    await assertZoneRules(tx, { domainId: domain.id, name, type: input.type, ...fields }, null);
    const [created] = await tx
      .insert(dnsRecords)
      .values({ domainId: domain.id, name, type: input.type, ttl: input.ttl, ...fields })
      .returning();
    await bumpSerial(tx, zone);
    return created;
  });
  return { ...toRecord(row), ...(await syncZoneFile(db, row.domainId)) };
}

/** Partial update; SOA records are the panel's (403) and a record's zone never changes. */
export async function updateDnsRecord(
  db: Database,
  accountId: number,
  id: number,
  patch: z.output<typeof updateDnsRecordBodySchema>,
): Promise<DnsRecordChange> {
  const row = await db.transaction(async (tx) => {
    const { zone, record } = await lockOwnedRecord(tx, accountId, id);
    assertNotSoa(record.type, "modified");
    assertNotSoa(patch.type, "created");
    const type = patch.type ?? record.type;
    const name = patch.name === undefined ? record.name : relativeRecordName(zone.domain, patch.name);
    const fields = validateRecordContent({
      type,
      content: patch.content ?? record.content,
      priority: patch.priority ?? record.priority,
      weight: patch.weight ?? record.weight,
      port: patch.port ?? record.port,
    });
    await assertZoneRules(tx, { domainId: record.domainId, name, type, ...fields }, record.id);
    const [updated] = await tx
      .update(dnsRecords)
      .set({ name, type, ttl: patch.ttl ?? record.ttl, ...fields })
      .where(eq(dnsRecords.id, id))
      .returning();
    await bumpSerial(tx, zone);
    return updated;
  });
  return { ...toRecord(row), ...(await syncZoneFile(db, row.domainId)) };
}

export async function deleteDnsRecord(db: Database, accountId: number, id: number): Promise<ZoneWarning> {
  const domainId = await db.transaction(async (tx) => {
    const { zone, record } = await lockOwnedRecord(tx, accountId, id);
    assertNotSoa(record.type, "deleted");
    await tx.delete(dnsRecords).where(eq(dnsRecords.id, id));
    await bumpSerial(tx, zone);
    return record.domainId;
  });
  return syncZoneFile(db, domainId);
}

export { countAccountRecords };

/** A record as a backup's records hold it (lib/backups/restore-account.ts). */
export type ZoneRecordFields = Pick<RecordRow, "name" | "type" | "content" | "ttl" | "priority" | "weight" | "port">;

/**
 * A whole-account restore's zone: every record but the SOA replaced by `records`, each checked
 * as a new one would be (a backup is read, not trusted), in one transaction with one serial bump.
 */
export async function replaceZoneRecords(db: Database, domainId: number, records: ZoneRecordFields[]): Promise<ZoneWarning> {
  await db.transaction(async (tx) => {
    const zone = await lockZone(tx, domainId);
    await tx.delete(dnsRecords).where(and(eq(dnsRecords.domainId, domainId), ne(dnsRecords.type, "SOA")));
    for (const record of records) {
      if (record.type === "SOA") continue;
      // Stored names are relative ("www", "a.b"): checked in their absolute form.
      const name = relativeRecordName(zone.domain, record.name === "@" ? "@" : `${record.name}.${zone.domain}`);
      await tx.insert(dnsRecords).values({ domainId, name, type: record.type, ttl: record.ttl, ...validateRecordContent({ ...record, type: record.type }) });
    }
    await bumpSerial(tx, zone);
  });
  return syncZoneFile(db, domainId);
}
