import { and, asc, count, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { cronJobs, hostingAccounts } from "@/db/schema";
import { assertQuota, lockAccount } from "@/lib/accounts/lock";
import { env } from "@/lib/env";
import { notFound } from "@/lib/errors";
import { homeOf } from "@/lib/provisioning/home-layout";
import { installCrontab, removeCrontab, renderCrontab } from "@/lib/provisioning/crontab";
import type { createCronJobBodySchema, CronJobRecord, updateCronJobBodySchema } from "./schemas";

// An account's cron jobs. With a Linux user per account (SYSTEM_USERS=1) every change installs
// the account's whole crontab from the rows its transaction sees, as the change's last step and
// under the account's row lock (a refusal rolls the change back); without, the jobs are kept
// and installed once there is a user to run them.

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

/**
 * Installs the account's crontab from its rows: its enabled jobs, none while the account is
 * suspended (`suspended`: the state being applied, else the stored one).
 */
export async function installAccountCrontab(db: Queryable, accountId: number, suspended?: boolean): Promise<void> {
  if (!env().systemUsers) return;
  const [account] = await db
    .select({ username: hostingAccounts.username, status: hostingAccounts.status })
    .from(hostingAccounts)
    .where(eq(hostingAccounts.id, accountId));
  if (!account) return;
  const paused = suspended ?? account.status === "suspended";
  const rows = paused ? [] : await db.select().from(cronJobs).where(and(eq(cronJobs.accountId, accountId), eq(cronJobs.isEnabled, true))).orderBy(asc(cronJobs.id));
  await installCrontab(account.username, renderCrontab(homeOf(account.username), rows), rows.length);
}

/** Terminate: the account's crontab goes. */
export async function removeAccountCrontab(username: string): Promise<void> {
  if (env().systemUsers) await removeCrontab(username);
}

export async function createCronJob(db: Database, accountId: number, input: z.output<typeof createCronJobBodySchema>): Promise<CronJobRecord> {
  return db.transaction(async (tx) => {
    const { plan } = await lockAccount(tx, accountId);
    const [{ total }] = await tx.select({ total: count() }).from(cronJobs).where(eq(cronJobs.accountId, accountId));
    assertQuota(total, plan.maxCronJobs, "cron jobs");
    const [row] = await tx.insert(cronJobs).values({ accountId, schedule: input.schedule, command: input.command, isEnabled: input.is_enabled }).returning();
    await installAccountCrontab(tx, accountId);
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
    await installAccountCrontab(tx, accountId);
    return toRecord(row);
  });
}

export async function deleteCronJob(db: Database, accountId: number, id: number): Promise<{ message: string }> {
  return db.transaction(async (tx) => {
    await lockAccount(tx, accountId);
    const [row] = await tx.delete(cronJobs).where(and(eq(cronJobs.id, id), eq(cronJobs.accountId, accountId))).returning({ id: cronJobs.id });
    if (!row) throw notFound("Cron job");
    await installAccountCrontab(tx, accountId);
    return { message: "Cron job removed" };
  });
}
