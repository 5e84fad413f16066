import { asc } from "drizzle-orm";
import { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { phpVersions } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { pgErrorCode, validationError } from "@/lib/errors";

export const addPhpVersionSchema = z.object({
  version: z.string().trim().regex(/^[0-9]+\.[0-9]+$/, "must look like 8.3"),
});
export type AddPhpVersionInput = z.input<typeof addPhpVersionSchema>;

export type PhpVersionRecord = { id: number; version: string };

const toRecord = (row: typeof phpVersions.$inferSelect): PhpVersionRecord => ({ id: row.id, version: row.version });

export async function addPhpVersion(db: Database, input: AddPhpVersionInput, actor: Actor): Promise<PhpVersionRecord> {
  const fields = addPhpVersionSchema.parse(input);
  try {
    return await db.transaction(async (tx) => {
      const [row] = await tx.insert(phpVersions).values(fields).returning();
      await recordAudit(tx, actor, { action: "php_version.add", targetType: "php_version", targetId: row.id });
      return toRecord(row);
    });
  } catch (error) {
    if (pgErrorCode(error) === "23505") throw validationError("version", "is already installed");
    throw error;
  }
}

export async function listPhpVersions(db: Queryable): Promise<PhpVersionRecord[]> {
  return (await db.select().from(phpVersions).orderBy(asc(phpVersions.version))).map(toRecord);
}
