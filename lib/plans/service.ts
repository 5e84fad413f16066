import { asc, eq } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { plans } from "@/db/schema";
import type { planSchema } from "@/lib/accounts/schemas";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { notFound, pgErrorCode, validationError } from "@/lib/errors";
import type { z } from "zod";
import { type CreatePlanInput, createPlanSchema, type UpdatePlanInput, updatePlanSchema } from "./schemas";

export type PlanRecord = z.infer<typeof planSchema>;

export const toPlanRecord = (row: typeof plans.$inferSelect): PlanRecord => ({
  id: row.id,
  name: row.name,
  max_databases: row.maxDatabases,
  max_database_users: row.maxDatabaseUsers,
  max_domains: row.maxDomains,
  max_dns_records: row.maxDnsRecords,
  disk_mb: row.diskMb,
});

const columnsOf = (fields: ReturnType<typeof updatePlanSchema.parse>) => ({
  name: fields.name,
  maxDatabases: fields.max_databases,
  maxDatabaseUsers: fields.max_database_users,
  maxDomains: fields.max_domains,
  maxDnsRecords: fields.max_dns_records,
  diskMb: fields.disk_mb,
});

function rethrowDuplicate(error: unknown): never {
  if (pgErrorCode(error) === "23505") throw validationError("name", "is already a plan");
  throw error;
}

export async function createPlan(db: Database, input: CreatePlanInput, actor: Actor): Promise<PlanRecord> {
  const fields = createPlanSchema.parse(input);
  return db
    .transaction(async (tx) => {
      const [row] = await tx.insert(plans).values({ ...columnsOf(fields), name: fields.name }).returning();
      await recordAudit(tx, actor, { action: "plan.create", targetType: "plan", targetId: row.id });
      return toPlanRecord(row);
    })
    .catch(rethrowDuplicate);
}

export async function updatePlan(db: Database, id: number, input: UpdatePlanInput, actor: Actor): Promise<PlanRecord> {
  const fields = updatePlanSchema.parse(input);
  return db
    .transaction(async (tx) => {
      const [row] = await tx.update(plans).set(columnsOf(fields)).where(eq(plans.id, id)).returning();
      if (!row) throw notFound("Plan");
      await recordAudit(tx, actor, { action: "plan.update", targetType: "plan", targetId: id });
      return toPlanRecord(row);
    })
    .catch(rethrowDuplicate);
}

export async function listPlans(db: Queryable): Promise<PlanRecord[]> {
  return (await db.select().from(plans).orderBy(asc(plans.name))).map(toPlanRecord);
}

export async function getPlan(db: Queryable, id: number): Promise<PlanRecord> {
  const [row] = await db.select().from(plans).where(eq(plans.id, id));
  if (!row) throw notFound("Plan");
  return toPlanRecord(row);
}

export async function findPlanByName(db: Queryable, name: string) {
  const [row] = await db.select().from(plans).where(eq(plans.name, name));
  return row ?? null;
}
