import { asc, eq } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { resellers } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { notFound, pgErrorCode, validationError } from "@/lib/errors";

export const createResellerSchema = z.object({
  username: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z][a-z0-9_]{0,31}$/, "must start with a letter; letters, digits and _ only; at most 32"),
});
export type CreateResellerInput = z.input<typeof createResellerSchema>;

export type ResellerRecord = { id: number; username: string; created_at: string };

const toRecord = (row: typeof resellers.$inferSelect): ResellerRecord => ({
  id: row.id,
  username: row.username,
  created_at: row.createdAt.toISOString(),
});

export async function createReseller(db: Database, input: CreateResellerInput, actor: Actor): Promise<ResellerRecord> {
  const fields = createResellerSchema.parse(input);
  try {
    return await db.transaction(async (tx) => {
      const [row] = await tx.insert(resellers).values(fields).returning();
      await recordAudit(tx, actor, { action: "reseller.create", targetType: "reseller", targetId: row.id });
      return toRecord(row);
    });
  } catch (error) {
    if (pgErrorCode(error) === "23505") throw validationError("username", "is already a reseller");
    throw error;
  }
}

export async function listResellers(db: Queryable): Promise<ResellerRecord[]> {
  return (await db.select().from(resellers).orderBy(asc(resellers.username))).map(toRecord);
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
