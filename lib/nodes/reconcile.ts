import { and, asc, eq, inArray, isNotNull, isNull, notInArray, type SQL } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { accountMoves, cronJobs, customerDatabases, databaseUsers, hostingAccounts, nodeJobs, nodes, plans } from "@/db/schema";
import { JOBS_STREAM, jobsConsumer } from "@/lib/agent/protocol";
import { accountMailStates } from "@/lib/email/service";
import { duringFinalPass, hostedAccounts, knownPhpVersions } from "@/lib/hosting/service";
import type { AccountState } from "@/lib/provisioning/reconcile";
import { notFound } from "@/lib/errors";
import type { AuthorizedKey } from "@/lib/provisioning/openssh";
import { accountKeys, loginAccounts } from "@/lib/ssh/service";
import { connectedBus } from "./bus";
import { publishQueuedJobs, queueOnNode } from "./dispatch";
import type { NodeRow } from "./hosts";

// The whole state of a node's accounts from the panel's database (docs/nodes.md "How it works"),
// queued for the node: every account of it when its agent says hello (it may have missed anything
// while it was away), one account after a change the node took but did not answer in time (the
// change was rolled back; the node must end as the database says). The node applies it with
// lib/provisioning/reconcile.ts.

/** The state of the accounts of `node` (or only `accountIds` of them). */
async function accountStates(db: Queryable, node: NodeRow, accountIds?: number[]): Promise<AccountState[]> {
  const logins = await loginAccounts(db, node.name);
  const keysOf = new Map(logins.map((login) => [login.username, login.keys]));
  // An account whose termination waits in this node's queue is not made again here: its removal
  // may run before or after this reconcile, and a reconcile after it would bring its Linux user back.
  const terminating = db
    .select({ accountId: nodeJobs.accountId })
    .from(nodeJobs)
    .where(and(eq(nodeJobs.nodeId, node.id), eq(nodeJobs.kind, "terminate"), eq(nodeJobs.state, "pending"), isNotNull(nodeJobs.accountId)));
  const which = and(eq(hostingAccounts.nodeId, node.id), notInArray(hostingAccounts.id, terminating), accountIds ? inArray(hostingAccounts.id, accountIds) : undefined);
  const states = await statesOf(db, which, (username) => keysOf.get(username) ?? []);
  // An account in the middle of its move's switch stays as its final pass holds it here: nothing
  // written on this node from now on would reach the target.
  const switchingRows = await db
    .select({ accountId: accountMoves.accountId })
    .from(accountMoves)
    .where(and(eq(accountMoves.sourceNodeId, node.id), eq(accountMoves.state, "switching")));
  const switching = new Set(switchingRows.map((row) => row.accountId));
  return states.map(({ id, state }) => (switching.has(id) ? { ...state, account: duringFinalPass(state.account) } : state));
}

/** One account's state, whichever node it is on now: what a move makes on its target (lib/moves/driver.ts). */
export async function accountState(db: Queryable, accountId: number): Promise<AccountState> {
  const keys = await accountKeys(db, accountId);
  const [found] = await statesOf(db, eq(hostingAccounts.id, accountId), () => keys);
  if (!found) throw notFound("Hosting account");
  return found.state;
}

/** The accounts `which` picks, with their ids. */
async function statesOf(db: Queryable, which: SQL | undefined, keysOf: (username: string) => AuthorizedKey[]): Promise<{ id: number; state: AccountState }[]> {
  const rows = await db
    .select({ id: hostingAccounts.id, shell: hostingAccounts.hasSshAccess, diskMb: plans.diskMb })
    .from(hostingAccounts)
    .innerJoin(plans, eq(plans.id, hostingAccounts.planId))
    .where(which)
    .orderBy(asc(hostingAccounts.id));
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const [hosting, cron, databases, users, mail] = await Promise.all([
    hostedAccounts(db, ids),
    db
      .select({ accountId: cronJobs.accountId, schedule: cronJobs.schedule, command: cronJobs.command })
      .from(cronJobs)
      .where(and(inArray(cronJobs.accountId, ids), eq(cronJobs.isEnabled, true)))
      .orderBy(asc(cronJobs.id)),
    db.select({ accountId: customerDatabases.accountId, name: customerDatabases.databaseName }).from(customerDatabases).where(inArray(customerDatabases.accountId, ids)),
    db.select({ accountId: databaseUsers.accountId, name: databaseUsers.username }).from(databaseUsers).where(inArray(databaseUsers.accountId, ids)),
    accountMailStates(db, ids),
  ]);
  const byAccount = (rows: { accountId: number; name: string }[]) => {
    const names = new Map<number, string[]>();
    for (const row of rows) names.set(row.accountId, [...(names.get(row.accountId) ?? []), row.name]);
    return names;
  };
  const [databasesOf, usersOf] = [byAccount(databases), byAccount(users)];
  return rows.map((row) => {
    const account = hosting.get(row.id)!;
    const state = {
      account,
      shell: row.shell,
      diskMb: row.diskMb,
      keys: keysOf(account.username),
      cron: cron.filter((job) => job.accountId === row.id).map(({ schedule, command }) => ({ schedule, command })),
      databases: databasesOf.get(row.id) ?? [],
      databaseUsers: usersOf.get(row.id) ?? [],
      mail: mail.get(row.id)!,
    };
    return { id: row.id, state };
  });
}

/** Queues the reconcile of one account for its node, and publishes it. */
export async function queueAccountReconcile(db: Database, accountId: number): Promise<void> {
  const [row] = await db.select({ node: nodes }).from(hostingAccounts).innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId)).where(eq(hostingAccounts.id, accountId));
  if (!row) return;
  const [state] = await accountStates(db, row.node, [accountId]);
  await queueOnNode(db, row.node, accountId, "reconcile", "account.ensure", { state, phpVersions: await knownPhpVersions(db) });
  await publishQueuedJobs(db, row.node.id);
}

/**
 * Queues the reconcile of every account of `node` (its agent said hello) and publishes what the
 * node has waiting. A node has at most one such reconcile waiting: a newer one replaces one not
 * yet sent; one already on the node's queue is not doubled (what is queued after it follows in
 * order, so the node ends as the database says) unless that queue is empty — its result never
 * reached the panel — when it is marked failed and replaced.
 */
export async function queueNodeReconcile(db: Database, node: NodeRow): Promise<void> {
  const waiting = await db
    .select({ id: nodeJobs.id, publishedAt: nodeJobs.publishedAt })
    .from(nodeJobs)
    .where(and(eq(nodeJobs.nodeId, node.id), eq(nodeJobs.kind, "reconcile"), isNull(nodeJobs.accountId), eq(nodeJobs.state, "pending")));
  const sent = waiting.filter((row) => row.publishedAt !== null).map((row) => row.id);
  const unsent = waiting.filter((row) => row.publishedAt === null).map((row) => row.id);
  if (sent.length > 0 && !(await nodeQueueIsEmpty(node.name))) return publishQueuedJobs(db, node.id);
  const accounts = await accountStates(db, node);
  await db.transaction(async (tx) => {
    if (sent.length > 0) {
      await tx
        .update(nodeJobs)
        .set({ state: "failed", error: "its result never reached the panel; replaced by a newer reconcile", finishedAt: new Date() })
        .where(and(inArray(nodeJobs.id, sent), eq(nodeJobs.state, "pending")));
    }
    if (unsent.length > 0) await tx.delete(nodeJobs).where(and(inArray(nodeJobs.id, unsent), isNull(nodeJobs.publishedAt)));
    await queueOnNode(tx, node, null, "reconcile", "node.reconcile", { accounts, phpVersions: await knownPhpVersions(tx) });
  });
  await publishQueuedJobs(db, node.id);
}

/** Whether the node's queue holds nothing (taken or not); false when the panel cannot tell. */
async function nodeQueueIsEmpty(node: string): Promise<boolean> {
  const bus = connectedBus();
  if (!bus) return false;
  const info = await bus.manager.consumers.info(JOBS_STREAM, jobsConsumer(node)).catch(() => null);
  return info !== null && info.num_pending === 0 && info.num_ack_pending === 0;
}
