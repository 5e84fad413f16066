import { and, eq, inArray, isNotNull, notInArray } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { apiKeys, customerDatabases, databaseGrants, databaseUsers, domains, hostingAccounts } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { AppError, notFound } from "@/lib/errors";
import { type Accepted, accepted } from "@/lib/http/accepted";
import { openMoveOf } from "@/lib/moves/records";
import { NodeUnavailableError, nodeTakesJobs, publishQueuedJobs, queueOnNode } from "@/lib/nodes/dispatch";
import { type Host, hostOfNode, nodeOfAccount, type NodeRow } from "@/lib/nodes/hosts";
import { type AccountManager, managedBy } from "./manager";
import { type HostingAccountRecord, suspendAccountBodySchema } from "./schemas";
import { accountServerParts, type AccountHoldings, type ServerStep } from "./server-parts";
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

/**
 * A move's last step on one machine (lib/moves/driver.ts): every part of the account removed from
 * `host` — the source once the target holds the truth, the target when a move is cancelled — its
 * records and the panel's own servers (zone files) untouched. `forwarding`: the source forwards
 * the account's domains to the target meanwhile, so their server blocks' files (the forwards now)
 * and the certificates they serve stay; the forward's end removes them.
 */
export async function removeAccountFrom(db: Queryable, host: Host, account: { id: number; username: string }, options: { forwarding?: boolean } = {}): Promise<void> {
  const all = await holdingsOf(db, account);
  const holdings = options.forwarding ? { ...all, domains: [] } : all;
  for (const part of accountServerParts) {
    const step = await part.removal(holdings, db);
    if (step.on === "host") await runStep(host, step);
  }
}

/** Suspend, unsuspend and terminate wait for an account's move to end: its two nodes are the move's until then. */
async function refuseWhileMoving(tx: Queryable, accountId: number): Promise<void> {
  const open = await openMoveOf(tx, accountId);
  if (open) throw new AppError("CONFLICT", `The account is moving to another node (${open.state}): cancel the move or try again once it has ended`);
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
): Promise<Outcome<HostingAccountRecord>> {
  const parsed = suspendAccountBodySchema.parse({ reason }).reason;
  return changeSuspension(db, manager, id, { suspended: true, reason: parsed || null }, actor);
}

export async function unsuspendAccount(db: Database, manager: AccountManager, id: number, actor: Actor): Promise<Outcome<HostingAccountRecord>> {
  return changeSuspension(db, manager, id, { suspended: false, reason: null }, actor);
}

/**
 * Runs a part's step: on the account's host, or on the panel's own servers. A node that does not
 * answer in time is a NodeUnavailableError (lib/nodes/dispatch.ts).
 */
async function runStep(host: Host, step: ServerStep): Promise<void> {
  if (step.on === "panel") await step.run();
  else await host.run(step.op, step.input as never);
}

/**
 * The account's host steps as one queued job for its node, which does not answer now: the
 * change is recorded, and the node carries it out (in order, after what it has waiting) when it
 * is back; the panel's own steps run now. The account's node_sync is `pending` until then.
 */
async function queueForNode(tx: Queryable, node: NodeRow, accountId: number, kind: "suspend" | "unsuspend" | "terminate", steps: ServerStep[]) {
  for (const step of steps) if (step.on === "panel") await step.run();
  const hostSteps = steps.filter((step) => step.on === "host").map((step) => ({ op: step.op, args: step.input }));
  await queueOnNode(tx, node, accountId, kind, "batch", { steps: hostSteps });
}

/** The answer of a change its node will carry out later: 202 with the account as it is now (node_sync pending). */
type Outcome<Body> = Body | Accepted<Body>;

/**
 * Suspending stops the account's own API keys (status change → auth_generation, migration 0004)
 * and applies each server part's suspension. Suspending a suspended account changes no record,
 * but the server parts run again: a part that missed the first call is brought in step. When the
 * account's node does not answer, the change is recorded and queued for it (202, node_sync pending).
 */
async function changeSuspension(
  db: Database,
  manager: AccountManager,
  id: number,
  { suspended, reason }: { suspended: boolean; reason: string | null },
  actor: Actor,
): Promise<Outcome<HostingAccountRecord>> {
  const queued = await db.transaction(async (tx) => {
    const account = await lockManagedAccount(tx, manager, id);
    await refuseWhileMoving(tx, id);
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
    const node = await nodeOfAccount(tx, id);
    const host = hostOfNode(node);
    // Suspend in the parts' order (sites answer 503 before database users are locked), unsuspend
    // the other way round (database users unlocked before the sites serve again).
    const parts = (suspended ? accountServerParts : [...accountServerParts].reverse()).filter((part) => part.suspension);
    const steps = await Promise.all(parts.map((part) => part.suspension!(holdings, suspended, tx)));
    const kind = suspended ? "suspend" : "unsuspend";
    if (!host.local && !nodeTakesJobs(node)) {
      await queueForNode(tx, node, id, kind, steps);
      return node;
    }
    const done: number[] = [];
    for (const [index, part] of parts.entries()) {
      try {
        await runStep(host, steps[index]);
        done.push(index);
      } catch (error) {
        if (error instanceof NodeUnavailableError) {
          // The node went silent midway: what it did not do waits for it, with the rest.
          await queueForNode(tx, node, id, kind, steps.filter((step, stepIndex) => step.on === "host" || !done.includes(stepIndex)));
          return node;
        }
        if (changed) {
          for (const undone of [...done, index].reverse()) {
            const undo = await parts[undone].suspension!(holdings, !suspended, tx);
            await runStep(host, undo).catch((undoError) => console.error(`[accounts] could not undo the ${parts[undone].name} step of ${account.username}:`, undoError));
          }
        }
        if (!(error instanceof AppError)) console.error(`[accounts] ${part.name} of ${account.username}:`, error);
        const message = `Could not ${kind} the account's ${part.name}: ${reasonOf(error)}`;
        throw new AppError("VALIDATION", message, { [kind]: [message] });
      }
    }
    return null;
  });
  if (queued) await publishQueuedJobs(db, queued.id);
  const record = await getAccount(db, id);
  return queued ? accepted(record) : record;
}

/**
 * Terminate: removes everything the account has on the servers first, part by part, then all
 * its records (domains with their DNS records, databases, database users, the account's API
 * keys) in one go. A failing part stops it with a 422 naming that part and what is left; the
 * records stay, so a repeated call finds every name again and finishes the job. When the
 * account's node does not answer, the account is suspended now (its keys refused), the panel's
 * own parts go, and the node's removal is queued (202): its records go once the node has done it
 * (finishTermination).
 */
export async function terminateAccount(
  db: Database,
  manager: AccountManager,
  id: number,
  actor: Actor,
): Promise<Outcome<{ message: string }>> {
  const { username, queuedOn } = await db.transaction(async (tx) => {
    const account = await lockManagedAccount(tx, manager, id);
    await refuseWhileMoving(tx, id);
    const holdings = await holdingsOf(tx, account);
    const node = await nodeOfAccount(tx, id);
    const host = hostOfNode(node);
    const queue = async (steps: ServerStep[]) => {
      await tx.update(hostingAccounts).set({ status: "suspended", suspensionReason: "Being terminated" }).where(eq(hostingAccounts.id, id));
      await queueForNode(tx, node, id, "terminate", steps);
      await recordAudit(tx, actor, { action: "hosting_account.terminate_queued", targetType: "hosting_account", targetId: id, details: { node: node.name } });
      return { username: account.username, queuedOn: node };
    };
    const steps = await Promise.all(accountServerParts.map((part) => part.removal(holdings, tx)));
    if (!host.local && !nodeTakesJobs(node)) return queue(steps);
    for (const [index, part] of accountServerParts.entries()) {
      try {
        await runStep(host, steps[index]);
      } catch (error) {
        if (error instanceof NodeUnavailableError) return queue(steps.slice(index));
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
      // The node names the repository its backups are in (the accounts list's Terminated, their restore).
      details: { ...holdings, node: node.name },
    });
    return { username: account.username, queuedOn: null };
  });
  if (!queuedOn) return { message: `Hosting account ${username} terminated` };
  await publishQueuedJobs(db, queuedOn.id);
  return accepted({ message: `Hosting account ${username} will be terminated when its node ${queuedOn.name} is back; until then it is suspended` });
}

/**
 * The end of a termination that waited for its node: the node removed everything, so the records
 * go (lib/nodes/events.ts calls this with the queued job's result).
 */
export async function finishTermination(db: Database, accountId: number): Promise<void> {
  await db.transaction(async (tx) => {
    const [account] = await tx.select().from(hostingAccounts).where(eq(hostingAccounts.id, accountId)).for("update");
    if (!account) return;
    const node = await nodeOfAccount(tx, accountId);
    await deleteAccountRecords(tx, accountId);
    await recordAudit(tx, { type: "system" }, { action: "hosting_account.terminate", targetType: "hosting_account", targetId: accountId, details: { username: account.username, node: node.name } });
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
