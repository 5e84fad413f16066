import { asc, eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { dnsRecords, domains } from "@/db/schema";
import { removeOrphanTemporaryFiles, writeZoneFile } from "@/lib/provisioning/zone-files";

/** A zone as stored: its domain name, serial and records. */
export async function loadZone(db: Queryable, domainId: number) {
  const [domain] = await db.select().from(domains).where(eq(domains.id, domainId));
  const records = await db.select().from(dnsRecords).where(eq(dnsRecords.domainId, domainId)).orderBy(asc(dnsRecords.id));
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

/** Rewrites every zone file (at start: ZONES_DIR may be new, or files lost, or litter left). */
export async function syncAllZoneFiles(db: Queryable): Promise<void> {
  await removeOrphanTemporaryFiles();
  const rows = await db.select({ id: domains.id }).from(domains).orderBy(asc(domains.id));
  for (const row of rows) await syncZoneFile(db, row.id);
}
