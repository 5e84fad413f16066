import { and, asc, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Queryable } from "@/db/client";
import { domains, phpVersions } from "@/db/schema";
import { createZone, nextSerial } from "@/lib/dns/zone";
import { notFound, pgErrorCode, validationError } from "@/lib/errors";
import type { domainRecordSchema } from "./schemas";

export interface NewDomain {
  accountId: number;
  /** Already normalised (lib/domains/names.ts). */
  domain: string;
  domainType: "domain" | "subdomain" | "parked";
  domainPath?: string | null;
  parentDomainId?: number | null;
  subdomain?: string | null;
  parkedOnDomainId?: number | null;
}

/**
 * Inserts a domain and provisions its zone (SOA, two NS, apex A). Run it inside the caller's
 * transaction: a failure leaves neither. A name taken anywhere on the server is a 422.
 */
export async function insertDomainWithZone(tx: Queryable, fields: NewDomain) {
  try {
    const [domain] = await tx
      .insert(domains)
      .values({ ...fields, soaSerial: nextSerial(0) })
      .returning();
    await createZone(tx, domain);
    return domain;
  } catch (error) {
    if (pgErrorCode(error) === "23505") throw validationError("domain", "is already hosted on this server");
    throw error;
  }
}

export type DomainRecord = z.infer<typeof domainRecordSchema>;

type DomainRow = typeof domains.$inferSelect;

export function toDomainRecord(row: DomainRow, php: { id: number; version: string } | null): DomainRecord {
  return {
    id: row.id,
    domain: row.domain,
    domain_type: row.domainType,
    domain_path: row.domainPath,
    parent_domain_id: row.parentDomainId,
    subdomain: row.subdomain,
    parked_on_domain_id: row.parkedOnDomainId,
    php_version: php,
    is_php_fpm_enabled: row.isPhpFpmEnabled,
    created_at: row.createdAt.toISOString(),
  };
}

function selectDomains(db: Queryable) {
  return db
    .select({ domain: domains, php: { id: phpVersions.id, version: phpVersions.version } })
    .from(domains)
    .leftJoin(phpVersions, eq(phpVersions.id, domains.phpVersionId));
}

/** GET /api/client/domains: the account's domains, oldest first. */
export async function listDomains(db: Queryable, accountId: number): Promise<DomainRecord[]> {
  const rows = await selectDomains(db).where(eq(domains.accountId, accountId)).orderBy(asc(domains.id));
  return rows.map((row) => toDomainRecord(row.domain, row.php));
}

/** One of the account's domains; another account's is "not found". */
export async function getDomainOrThrow(db: Queryable, { accountId, id }: { accountId: number; id: number }) {
  const [row] = await selectDomains(db).where(and(eq(domains.accountId, accountId), eq(domains.id, id)));
  if (!row) throw notFound("Domain");
  return toDomainRecord(row.domain, row.php);
}
