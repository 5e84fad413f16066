import { asc, count, eq, ilike } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { DEFAULT_PLAN_NAME } from "@/db/prepare";
import { hostingAccounts, plans } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { applyAccountMailOf } from "@/lib/email/service";
import { applyDiskQuotas } from "@/lib/hosting/service";
import { applyPhpCaps } from "@/lib/php-settings/service";
import { notFound, pgErrorCode, validationError } from "@/lib/errors";
import { containsPattern, type ListPage, type ListQuery, listQuerySchema, paged } from "@/lib/list-query";
import {
  type CreatePlanInput,
  createPlanSchema,
  type PlanListRow,
  type PlanRecord,
  type UpdatePlanInput,
  updatePlanSchema,
} from "./schemas";

export type { PlanRecord } from "./schemas";

export const toPlanRecord = (row: typeof plans.$inferSelect): PlanRecord => ({
  id: row.id,
  name: row.name,
  max_databases: row.maxDatabases,
  max_database_users: row.maxDatabaseUsers,
  max_domains: row.maxDomains,
  max_dns_records: row.maxDnsRecords,
  disk_mb: row.diskMb,
  max_php_memory_mb: row.maxPhpMemoryMb,
  max_php_upload_mb: row.maxPhpUploadMb,
  max_cron_jobs: row.maxCronJobs,
  mailboxes: row.mailboxes,
  mail_quota_mb: row.mailQuotaMb,
  mail_per_hour: row.mailPerHour,
  mail_per_day: row.mailPerDay,
});

const columnsOf = (fields: ReturnType<typeof updatePlanSchema.parse>) => ({
  name: fields.name,
  maxDatabases: fields.max_databases,
  maxDatabaseUsers: fields.max_database_users,
  maxDomains: fields.max_domains,
  maxDnsRecords: fields.max_dns_records,
  diskMb: fields.disk_mb,
  maxPhpMemoryMb: fields.max_php_memory_mb,
  maxPhpUploadMb: fields.max_php_upload_mb,
  maxCronJobs: fields.max_cron_jobs,
  mailboxes: fields.mailboxes,
  mailQuotaMb: fields.mail_quota_mb,
  mailPerHour: fields.mail_per_hour,
  mailPerDay: fields.mail_per_day,
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

/** Partial update. The default plan keeps its name: accounts created without a plan get it by name. */
export async function updatePlan(db: Database, id: number, input: UpdatePlanInput, actor: Actor): Promise<PlanRecord> {
  const fields = updatePlanSchema.parse(input);
  return db
    .transaction(async (tx) => {
      const [current] = await tx.select().from(plans).where(eq(plans.id, id)).for("update");
      if (!current) throw notFound("Plan");
      if (current.name === DEFAULT_PLAN_NAME && fields.name !== undefined && fields.name !== DEFAULT_PLAN_NAME) {
        throw validationError("name", "of the default plan cannot change: accounts created without a plan get it by this name");
      }
      const [row] = await tx.update(plans).set(columnsOf(fields)).where(eq(plans.id, id)).returning();
      await recordAudit(tx, actor, { action: "plan.update", targetType: "plan", targetId: id });
      return toPlanRecord(row);
    })
    .then(async (plan) => {
      // The new disk_mb as the quota of the plan's accounts (where quotas are on).
      if (fields.disk_mb !== undefined) await applyDiskQuotas(db, { planId: id });
      // New PHP caps: the plan's accounts run within them from now on.
      if (fields.max_php_memory_mb !== undefined || fields.max_php_upload_mb !== undefined) {
        const accounts = await db.select({ id: hostingAccounts.id }).from(hostingAccounts).where(eq(hostingAccounts.planId, id));
        await applyPhpCaps(db, accounts.map((account) => account.id));
      }
      // New sending limits: each account's machine counts against them from now on (its mail state carries them).
      if (fields.mail_per_hour !== undefined || fields.mail_per_day !== undefined) {
        const accounts = await db.select({ id: hostingAccounts.id }).from(hostingAccounts).where(eq(hostingAccounts.planId, id));
        for (const account of accounts) {
          await applyAccountMailOf(db, account.id).catch((error) => console.error(`[mail] the new sending limits of account ${account.id} were not applied:`, (error as Error).message));
        }
      }
      return plan;
    })
    .catch(rethrowDuplicate);
}

export async function listPlans(db: Queryable): Promise<PlanRecord[]> {
  return (await db.select().from(plans).orderBy(asc(plans.name))).map(toPlanRecord);
}

/** The admin list: searched by name, paged, with the number of accounts on each plan. */
export async function listPlansPage(db: Queryable, query: ListQuery): Promise<ListPage<PlanListRow>> {
  const { search, ...window } = listQuerySchema.parse(query);
  const where = search ? ilike(plans.name, containsPattern(search)) : undefined;
  const rowsQuery = db
    .select({ plan: plans, accountCount: count(hostingAccounts.id) })
    .from(plans)
    .leftJoin(hostingAccounts, eq(hostingAccounts.planId, plans.id))
    .where(where)
    .groupBy(plans.id)
    .orderBy(asc(plans.name))
    .$dynamic();
  const [rows, [{ total }]] = await Promise.all([
    paged(rowsQuery, window),
    db.select({ total: count() }).from(plans).where(where),
  ]);
  return { rows: rows.map((row) => ({ ...toPlanRecord(row.plan), account_count: row.accountCount })), total };
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
