import { and, eq, inArray, isNotNull, notInArray } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { apiKeys, customerDatabases, databaseGrants, databaseUsers, domains, hostingAccounts } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { AppError, notFound } from "@/lib/errors";
import { type AccountManager, managedBy } from "./manager";
import { type HostingAccountRecord, suspendAccountBodySchema } from "./schemas";
import { accountServerParts, type AccountHoldings, type AccountServerPart } from "./server-parts";
import { getAccount } from "./service";

// Suspend, unsuspend and terminate: one implementation for the API, the admin UI and the command
// line. Each locks the account's row for its whole run, so no database or domain of the account
// can be created meanwhile (their creates lock the same row, lib/accounts/lock.ts), and acts
// on the servers through accountServerParts, in their order.

async function lockManagedAccount(tx: Queryable, manager: AccountManager, id: number) {
  const [account] = await tx
    .select()
    .from(hostingAccounts)
    .where(and(eq(hostingAccounts.id, id), managedBy(manager)))
    .for("update");
  if (!account) throw notFound("Hosting account");
  return account;
}

async function holdingsOf(tx: Queryable, account: { id: number; username: string }): Promise<AccountHoldings> {
  const [domainRows, databaseRows, userRows] = await Promise.all([
    tx.select({ name: domains.domain }).from(domains).where(eq(domains.accountId, account.id)),
    tx.select({ name: customerDatabases.databaseName }).from(customerDatabases).where(eq(customerDatabases.accountId, account.id)),
    tx.select({ name: databaseUsers.username }).from(databaseUsers).where(eq(databaseUsers.accountId, account.id)),
  ]);
  const names = (rows: { name: string }[]) => rows.map((row) => row.name);
  return { accountId: account.id, username: account.username, domains: names(domainRows), databases: names(databaseRows), databaseUsers: names(userRows) };
}

/** What a failed server step may show: a service's own message, else a pointer to the log. */
const reasonOf = (error: unknown) =>
  error instanceof AppError ? error.message : "an unexpected error (see the panel's log)";

export async function suspendAccount(
  db: Database,
  manager: AccountManager,
  id: number,
  reason: string | undefined,
  actor: Actor,
): Promise<HostingAccountRecord> {
  const parsed = suspendAccountBodySchema.parse({ reason }).reason;
  return changeSuspension(db, manager, id, { suspended: true, reason: parsed || null }, actor);
}

export async function unsuspendAccount(db: Database, manager: AccountManager, id: number, actor: Actor) {
  return changeSuspension(db, manager, id, { suspended: false, reason: null }, actor);
}

/**
 * Suspending stops the account's own API keys (status change → auth_generation, migration 0004)
 * and applies each server part's suspension. Suspending a suspended account changes no record,
 * but the server parts run again: a part that missed the first call is brought in step.
 */
async function changeSuspension(
  db: Database,
  manager: AccountManager,
  id: number,
  { suspended, reason }: { suspended: boolean; reason: string | null },
  actor: Actor,
): Promise<HostingAccountRecord> {
  await db.transaction(async (tx) => {
    const account = await lockManagedAccount(tx, manager, id);
    const changed = (account.status === "suspended") !== suspended;
    if (changed) {
      await tx
        .update(hostingAccounts)
        .set({ status: suspended ? "suspended" : "active", suspensionReason: reason })
        .where(eq(hostingAccounts.id, id));
      await recordAudit(tx, actor, {
        action: suspended ? "hosting_account.suspend" : "hosting_account.unsuspend",
        targetType: "hosting_account",
        targetId: id,
        details: suspended ? { reason } : {},
      });
    }
    // Last inside the transaction: a server failure rolls the status back, and the parts already
    // switched are switched back, so the account is never half suspended.
    const holdings = await holdingsOf(tx, account);
    const done: AccountServerPart[] = [];
    // Suspend in the parts' order (sites answer 503 before database users are locked), unsuspend
    // the other way round (database users unlocked before the sites serve again).
    const parts = suspended ? accountServerParts : [...accountServerParts].reverse();
    for (const part of parts) {
      if (!part.setSuspended) continue;
      try {
        await part.setSuspended(holdings, suspended, tx);
        done.push(part);
      } catch (error) {
        if (changed) {
          for (const undone of [...done, part].reverse()) {
            await undone.setSuspended!(holdings, !suspended, tx).catch((undoError) =>
              console.error(`[accounts] could not undo the ${undone.name} step of ${account.username}:`, undoError),
            );
          }
        }
        if (!(error instanceof AppError)) console.error(`[accounts] ${part.name} of ${account.username}:`, error);
        const verb = suspended ? "suspend" : "unsuspend";
        const message = `Could not ${verb} the account's ${part.name}: ${reasonOf(error)}`;
        throw new AppError("VALIDATION", message, { [verb]: [message] });
      }
    }
  });
  return getAccount(db, id);
}

/**
 * Terminate: removes everything the account has on the servers first, part by part, then all
 * its records (domains with their DNS records, databases, database users, the account's API
 * keys) in one go. A failing part stops it with a 422 naming that part and what is left; the
 * records stay, so a repeated call finds every name again and finishes the job.
 */
export async function terminateAccount(
  db: Database,
  manager: AccountManager,
  id: number,
  actor: Actor,
): Promise<{ message: string }> {
  return db.transaction(async (tx) => {
    const account = await lockManagedAccount(tx, manager, id);
    const holdings = await holdingsOf(tx, account);
    for (const [index, part] of accountServerParts.entries()) {
      try {
        await part.remove(holdings, tx);
      } catch (error) {
        if (!(error instanceof AppError)) console.error(`[accounts] removing ${part.name} of ${account.username}:`, error);
        const left = [...accountServerParts.slice(index).map((rest) => rest.name), "the panel's records"];
        throw new AppError(
          "VALIDATION",
          `Could not terminate ${account.username}: removing its ${part.name} failed (${reasonOf(error)}). ` +
            `Still there: ${left.join(", ")}. Call DELETE again to finish.`,
          { failed: [part.name], left },
        );
      }
    }
    await deleteAccountRecords(tx, account.id);
    await recordAudit(tx, actor, {
      action: "hosting_account.terminate",
      targetType: "hosting_account",
      targetId: account.id,
      details: { ...holdings },
    });
    return { message: `Hosting account ${account.username} terminated` };
  });
}

async function deleteAccountRecords(tx: Queryable, accountId: number) {
  const ownDatabases = tx.select({ id: customerDatabases.id }).from(customerDatabases).where(eq(customerDatabases.accountId, accountId));
  // Grants restrict deletes of both sides: they go first.
  await tx.delete(databaseGrants).where(inArray(databaseGrants.databaseId, ownDatabases));
  await tx.delete(customerDatabases).where(eq(customerDatabases.accountId, accountId));
  await tx.delete(databaseUsers).where(eq(databaseUsers.accountId, accountId));
  // Subdomains and parked domains restrict deletes of the domain they hang on: leaves first,
  // until none is left (DNS records go with their domain).
  for (;;) {
    const parents = tx.select({ id: domains.parentDomainId }).from(domains).where(isNotNull(domains.parentDomainId));
    const parkedOn = tx.select({ id: domains.parkedOnDomainId }).from(domains).where(isNotNull(domains.parkedOnDomainId));
    const removed = await tx
      .delete(domains)
      .where(and(eq(domains.accountId, accountId), notInArray(domains.id, parents), notInArray(domains.id, parkedOn)))
      .returning({ id: domains.id });
    if (removed.length === 0) break;
  }
  await tx.delete(apiKeys).where(eq(apiKeys.accountId, accountId));
  await tx.delete(hostingAccounts).where(eq(hostingAccounts.id, accountId));
}
