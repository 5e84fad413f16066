import { asc, count, eq, ilike, sql } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { domains, phpVersions } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { notFound, pgErrorCode, validationError } from "@/lib/errors";
import { containsPattern, type ListPage, type ListQuery, listQuerySchema, paged } from "@/lib/list-query";
import { installedPhpVersions, isPhpInstalled } from "@/lib/provisioning/php-fpm";
import {
  type InstalledPhpVersion,
  type PhpVersionInput,
  type PhpVersionListRow,
  type PhpVersionRecord,
  phpVersionSchema,
} from "./schemas";

const toRecord = (row: typeof phpVersions.$inferSelect): PhpVersionRecord => ({ id: row.id, version: row.version });

const withInstalled = async (row: typeof phpVersions.$inferSelect): Promise<InstalledPhpVersion> => ({
  ...toRecord(row),
  installed: await isPhpInstalled(row.version),
});

function rethrowDuplicate(error: unknown): never {
  if (pgErrorCode(error) === "23505") throw validationError("version", "is already installed");
  throw error;
}

export async function addPhpVersion(db: Database, input: PhpVersionInput, actor: Actor): Promise<PhpVersionRecord> {
  const fields = phpVersionSchema.parse(input);
  return db
    .transaction(async (tx) => {
      const [row] = await tx.insert(phpVersions).values(fields).returning();
      await recordAudit(tx, actor, { action: "php_version.add", targetType: "php_version", targetId: row.id });
      return toRecord(row);
    })
    .catch(rethrowDuplicate);
}

/**
 * At start, while the panel knows no PHP version at all (a fresh install): every version whose
 * PHP-FPM this server has is registered, so a new account can run PHP without `panel php add`.
 */
export async function registerInstalledPhpVersions(db: Database): Promise<string[]> {
  const [{ known }] = await db.select({ known: count() }).from(phpVersions);
  if (known > 0) return [];
  const versions = await installedPhpVersions();
  for (const version of versions) await addPhpVersion(db, { version }, { type: "system" });
  return versions;
}

/** Corrects a version's number; the domains using it keep it (they refer to it by id). */
export async function updatePhpVersion(db: Database, id: number, input: PhpVersionInput, actor: Actor): Promise<PhpVersionRecord> {
  const fields = phpVersionSchema.parse(input);
  return db
    .transaction(async (tx) => {
      const [before] = await tx.select().from(phpVersions).where(eq(phpVersions.id, id)).for("update");
      if (!before) throw notFound("PHP version");
      const [row] = await tx.update(phpVersions).set(fields).where(eq(phpVersions.id, id)).returning();
      await recordAudit(tx, actor, {
        action: "php_version.update",
        targetType: "php_version",
        targetId: id,
        details: { version: { from: before.version, to: row.version } },
      });
      return toRecord(row);
    })
    .catch(rethrowDuplicate);
}

export async function getPhpVersion(db: Queryable, id: number): Promise<PhpVersionRecord> {
  const [row] = await db.select().from(phpVersions).where(eq(phpVersions.id, id));
  if (!row) throw notFound("PHP version");
  return toRecord(row);
}

export async function listPhpVersions(db: Queryable): Promise<InstalledPhpVersion[]> {
  return Promise.all((await db.select().from(phpVersions).orderBy(asc(phpVersions.version))).map(withInstalled));
}

/** The admin list: searched by version, numerically ordered (8.3 before 8.10), with the domains using each. */
export async function listPhpVersionsPage(db: Queryable, query: ListQuery): Promise<ListPage<PhpVersionListRow>> {
  const { search, ...window } = listQuerySchema.parse(query);
  const where = search ? ilike(phpVersions.version, containsPattern(search)) : undefined;
  const rowsQuery = db
    .select({ php: phpVersions, domainCount: count(domains.id) })
    .from(phpVersions)
    .leftJoin(domains, eq(domains.phpVersionId, phpVersions.id))
    .where(where)
    .groupBy(phpVersions.id)
    // Major, then minor, compared as padded text: numeric order without a cast that a row
    // written outside the panel could make fail.
    .orderBy(
      sql`lpad(split_part(${phpVersions.version}, '.', 1), 6, '0')`,
      sql`lpad(split_part(${phpVersions.version}, '.', 2), 6, '0')`,
      phpVersions.version,
    )
    .$dynamic();
  const [rows, [{ total }]] = await Promise.all([
    paged(rowsQuery, window),
    db.select({ total: count() }).from(phpVersions).where(where),
  ]);
  return {
    rows: await Promise.all(rows.map(async (row) => ({ ...(await withInstalled(row.php)), domain_count: row.domainCount }))),
    total,
  };
}
