import { and, asc, count, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { cronJobs, hostingAccounts } from "@/db/schema";
import { assertQuota, lockAccount } from "@/lib/accounts/lock";
import { notFound } from "@/lib/errors";
import { hostOfAccount } from "@/lib/nodes/hosts";
import type { CronLine } from "@/lib/provisioning/crontab";
import type { createCronJobBodySchema, CronJobRecord, updateCronJobBodySchema } from "./schemas";

// An account's cron jobs. Every change installs the account's whole crontab on its host from the
// rows its transaction sees, as the change's last step and under the account's row lock (a
// refusal rolls the change back); a host without Linux users (SYSTEM_USERS) keeps none, and the
// jobs are installed once there is a user to run them.

const toRecord = (row: typeof cronJobs.$inferSelect): CronJobRecord => ({
  id: row.id,
  schedule: row.schedule,
  command: row.command,
  is_enabled: row.isEnabled,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
});

export async function listCronJobs(db: Queryable, accountId: number): Promise<CronJobRecord[]> {
  const rows = await db.select().from(cronJobs).where(eq(cronJobs.accountId, accountId)).orderBy(asc(cronJobs.id));
  return rows.map(toRecord);
}

/** The account's enabled jobs, as its crontab runs them. */
export async function accountCronLines(db: Queryable, accountId: number): Promise<CronLine[]> {
  const rows = await db.select().from(cronJobs).where(and(eq(cronJobs.accountId, accountId), eq(cronJobs.isEnabled, true))).orderBy(asc(cronJobs.id));
  return rows.map((row) => ({ schedule: row.schedule, command: row.command }));
}

/** Installs the account's crontab on its host from the rows `db` sees: its enabled jobs, none while it is suspended. */
async function installCrontabOf(db: Queryable, accountId: number): Promise<void> {
  const [account] = await db
    .select({ username: hostingAccounts.username, status: hostingAccounts.status })
    .from(hostingAccounts)
    .where(eq(hostingAccounts.id, accountId));
  if (!account) return;
  const host = await hostOfAccount(db, accountId);
  await host.run("account.crontab", { username: account.username, jobs: await accountCronLines(db, accountId), suspended: account.status === "suspended" });
}

export async function createCronJob(db: Database, accountId: number, input: z.output<typeof createCronJobBodySchema>): Promise<CronJobRecord> {
  return db.transaction(async (tx) => {
    const { plan } = await lockAccount(tx, accountId);
    const [{ total }] = await tx.select({ total: count() }).from(cronJobs).where(eq(cronJobs.accountId, accountId));
    assertQuota(total, plan.maxCronJobs, "cron jobs");
    const [row] = await tx.insert(cronJobs).values({ accountId, schedule: input.schedule, command: input.command, isEnabled: input.is_enabled }).returning();
    await installCrontabOf(tx, accountId);
    return toRecord(row);
  });
}

export async function updateCronJob(
  db: Database,
  accountId: number,
  id: number,
  input: z.output<typeof updateCronJobBodySchema>,
): Promise<CronJobRecord> {
  return db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
    const [row] = await tx
      .update(cronJobs)
      .set({ schedule: input.schedule, command: input.command, isEnabled: input.is_enabled })
      .where(and(eq(cronJobs.id, id), eq(cronJobs.accountId, accountId)))
      .returning();
    if (!row) throw notFound("Cron job");
    await installCrontabOf(tx, accountId);
    return toRecord(row);
  });
}

export async function deleteCronJob(db: Database, accountId: number, id: number): Promise<{ message: string }> {
  return db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
    const [row] = await tx.delete(cronJobs).where(and(eq(cronJobs.id, id), eq(cronJobs.accountId, accountId))).returning({ id: cronJobs.id });
    if (!row) throw notFound("Cron job");
    await installCrontabOf(tx, accountId);
    return { message: "Cron job removed" };
  });
}
