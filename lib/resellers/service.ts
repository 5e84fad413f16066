import { asc, count, eq, ilike } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { hostingAccounts, resellers } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { notFound, pgErrorCode, validationError } from "@/lib/errors";
import { containsPattern, type ListPage, type ListQuery, listQuerySchema, paged } from "@/lib/list-query";
import { type ResellerInput, type ResellerListRow, type ResellerRecord, resellerSchema } from "./schemas";

const toRecord = (row: typeof resellers.$inferSelect): ResellerRecord => ({
  id: row.id,
  username: row.username,
  created_at: row.createdAt.toISOString(),
});

function rethrowDuplicate(error: unknown): never {
  if (pgErrorCode(error) === "23505") throw validationError("username", "is already a reseller");
  throw error;
}

export async function createReseller(db: Database, input: ResellerInput, actor: Actor): Promise<ResellerRecord> {
  const fields = resellerSchema.parse(input);
  return db
    .transaction(async (tx) => {
      const [row] = await tx.insert(resellers).values(fields).returning();
      await recordAudit(tx, actor, { action: "reseller.create", targetType: "reseller", targetId: row.id });
      return toRecord(row);
    })
    .catch(rethrowDuplicate);
}

/** Renames a reseller. Keys and accounts refer to it by id, so access is unchanged. */
export async function updateReseller(db: Database, id: number, input: ResellerInput, actor: Actor): Promise<ResellerRecord> {
  const fields = resellerSchema.parse(input);
  return db
    .transaction(async (tx) => {
      const [before] = await tx.select().from(resellers).where(eq(resellers.id, id)).for("update");
      if (!before) throw notFound("Reseller");
      const [row] = await tx.update(resellers).set(fields).where(eq(resellers.id, id)).returning();
      await recordAudit(tx, actor, {
        action: "reseller.update",
        targetType: "reseller",
        targetId: id,
        details: { username: { from: before.username, to: row.username } },
      });
      return toRecord(row);
    })
    .catch(rethrowDuplicate);
}

export async function listResellers(db: Queryable): Promise<ResellerRecord[]> {
  return (await db.select().from(resellers).orderBy(asc(resellers.username))).map(toRecord);
}

/** The admin list: searched by username, paged, with each reseller's number of accounts. */
export async function listResellersPage(db: Queryable, query: ListQuery): Promise<ListPage<ResellerListRow>> {
  const { search, ...window } = listQuerySchema.parse(query);
  const where = search ? ilike(resellers.username, containsPattern(search)) : undefined;
  const rowsQuery = db
    .select({ reseller: resellers, accountCount: count(hostingAccounts.id) })
    .from(resellers)
    .leftJoin(hostingAccounts, eq(hostingAccounts.resellerId, resellers.id))
    .where(where)
    .groupBy(resellers.id)
    .orderBy(asc(resellers.username))
    .$dynamic();
  const [rows, [{ total }]] = await Promise.all([
    paged(rowsQuery, window),
    db.select({ total: count() }).from(resellers).where(where),
  ]);
  return { rows: rows.map((row) => ({ ...toRecord(row.reseller), account_count: row.accountCount })), total };
}

export async function findResellerByUsername(db: Queryable, username: string) {
  const [row] = await db.select().from(resellers).where(eq(resellers.username, username.trim().toLowerCase()));
  return row ?? null;
}

export async function getReseller(db: Queryable, id: number): Promise<ResellerRecord> {
  const [row] = await db.select().from(resellers).where(eq(resellers.id, id));
  if (!row) throw notFound("Reseller");
  return toRecord(row);
}
