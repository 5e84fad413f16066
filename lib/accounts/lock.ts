import { eq } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { hostingAccounts, plans } from "@/db/schema";
import { AppError, notFound } from "@/lib/errors";

/**
 * Locks the account row until the transaction ends and returns what its changes check: status,
 * username, main domain and plan. Every create that counts against a quota takes this lock first, so
 * concurrent creates cannot overshoot, and none runs beside a suspension or a plan change.
 */
export async function lockAccount(tx: Queryable, accountId: number) {
  const [row] = await tx
    .select({ status: hostingAccounts.status, username: hostingAccounts.username, domain: hostingAccounts.domain, plan: plans })
    .from(hostingAccounts)
    .innerJoin(plans, eq(plans.id, hostingAccounts.planId))
    .where(eq(hostingAccounts.id, accountId))
    .for("update", { of: hostingAccounts });
  if (!row) throw notFound("Hosting account");
  return row;
}

/** 422 when `used` has reached a plan's `limit` (null = unlimited). */
export function assertQuota(used: number, limit: number | null, what: string): void {
  if (limit === null || used < limit) return;
  const message = `the plan allows ${limit} ${what}`;
  throw new AppError("VALIDATION", `Quota reached: ${message}`, { quota: [message] });
}
