import { asc, eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { dnsRecords, domains } from "@/db/schema";
import { removeOrphanTemporaryFiles, writeZoneFile, writeZoneFiles, type ZoneRecord } from "@/lib/provisioning/zone-files";
import { zoneRecords } from "./zone";

/** A zone as stored: its domain name, serial and records. */
export async function loadZone(db: Queryable, domainId: number) {
  const [domain] = await db.select({ domain: domains.domain, soaSerial: domains.soaSerial }).from(domains).where(eq(domains.id, domainId));
  const records = await zoneRecords(db).execute({ domainId });
  return { domain: domain.domain, serial: domain.soaSerial, records };
}

/** What a zone change answers besides its record when the zone file or its reload failed. */
export type ZoneWarning = { warning?: string };

/**
 * Rewrites the zone's file after a committed change. Runs after the commit: the database is the
 * record of truth, and the file is regenerated whole from it each time, so a failed write is
 * repaired by the zone's next change. A failure is logged and returned as `{ warning }` for the
 * response (the change itself stands).
 */
export async function syncZoneFile(db: Queryable, domainId: number): Promise<ZoneWarning> {
  try {
    const { reloadError } = await writeZoneFile(await loadZone(db, domainId));
    // The reload command's output and the write's error go to the log (writeZoneFile, below):
    // they name commands and paths of the server, which are not the caller's business.
    return reloadError ? { warning: "Saved, but the zone reload failed; the panel's log says why" } : {};
  } catch (error) {
    console.error(`[dns] could not write the zone file of domain ${domainId}:`, error);
    return {
      warning: "Saved, but the zone file could not be written; it is written again at the zone's next change or the panel's next start",
    };
  }
}

/**
 * At start (ZONES_DIR may be new, or files lost, or litter left): every zone from two queries,
 * each file written and reloaded only when its content changed (writeZoneFiles).
 */
export async function syncAllZoneFiles(db: Queryable): Promise<void> {
  await removeOrphanTemporaryFiles();
  const zones = await db.select({ id: domains.id, domain: domains.domain, serial: domains.soaSerial }).from(domains).orderBy(asc(domains.id));
  // Only what a zone file renders (10,000 zones at start: no timestamps to map).
  const records = await db
    .select({
      domainId: dnsRecords.domainId,
      name: dnsRecords.name,
      type: dnsRecords.type,
      content: dnsRecords.content,
      ttl: dnsRecords.ttl,
      priority: dnsRecords.priority,
      weight: dnsRecords.weight,
      port: dnsRecords.port,
    })
    .from(dnsRecords)
    .orderBy(asc(dnsRecords.domainId), asc(dnsRecords.id));
  const byDomain = new Map<number, ZoneRecord[]>();
  for (const record of records) {
    const zone = byDomain.get(record.domainId);
    if (zone) zone.push(record);
    else byDomain.set(record.domainId, [record]);
  }
  try {
    await writeZoneFiles(zones.map((zone) => ({ domain: zone.domain, serial: zone.serial, records: byDomain.get(zone.id) ?? [] })));
  } catch (error) {
    // Logged, as a refused configuration of the sites is: the panel still starts.
    console.error("[dns] the zone files could not be written at start:", (error as Error).message);
  }
}
