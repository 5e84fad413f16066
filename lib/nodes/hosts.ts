import { eq } from "drizzle-orm";
import { getDb, type Queryable } from "@/db/client";
import { hostingAccounts, nodes } from "@/db/schema";
import { nodeOperations, type OperationInput, type OperationName, type OperationOutput } from "@/lib/agent/operations";
import { notFound } from "@/lib/errors";
import { type DatabaseServerCall, type MysqlProvisioner, mysqlProvisioner } from "@/lib/provisioning/mysql";
import { checkedAnswer } from "./answers";
import { type LongRun, runOnNodeNow } from "./dispatch";
import { LOCAL_NODE } from "./schemas";
import { findNodeByName } from "./service";

// Where an account's work runs (docs/nodes.md "How it works"): the machine that hosts it. For
// `local`, the panel's own machine, an operation of lib/agent/operations.ts is a function call in
// this process; for any other node it is a job on that node's queue, waited for
// (lib/nodes/dispatch.ts: a refusal is a 422, silence a 503 naming the node). Services ask for the
// host of the account they change and run the same operations either way.

export type NodeRow = typeof nodes.$inferSelect;

export interface Host {
  node: NodeRow;
  local: boolean;
  /** `long`: a backup or a restore, stopped at its deadline (lib/nodes/dispatch.ts LongRun). */
  run<Name extends OperationName>(op: Name, input: OperationInput<Name>, long?: LongRun): Promise<OperationOutput<Name>>;
}

const runHere = <Name extends OperationName>(op: Name, input: OperationInput<Name>, long?: LongRun) => {
  const deadline = long && AbortSignal.timeout(long.deadlineMs);
  const signal = deadline && (long.signal ? AbortSignal.any([long.signal, deadline]) : deadline);
  return (nodeOperations[op] as (input: OperationInput<Name>, signal?: AbortSignal) => Promise<OperationOutput<Name>>)(input, signal);
};

/**
 * The host of `node`. `accountId`: the account whose change this is; when its node took a job
 * but did not answer in time, a reconcile of the account is queued once the change has been
 * rolled back (lib/nodes/reconcile.ts), so the node ends as the database says. `currentRow`:
 * the node's row as it is at each call, for a caller whose calls outlast the heartbeat limit
 * (otherwise `node`'s last heartbeat judges whether it answers).
 */
export function hostOfNode(node: NodeRow, accountId?: number, currentRow?: () => Promise<NodeRow>): Host {
  if (node.name === LOCAL_NODE) return { node, local: true, run: runHere };
  const afterSilence = accountId === undefined ? undefined : async () => scheduleAccountReconcile(accountId);
  return {
    node,
    local: false,
    // Another machine's answer: checked against what was asked before anything keeps or relays it.
    run: (async (op, input, long) => checkedAnswer(node.name, op, input, await runOnNodeNow(currentRow ? await currentRow() : node, op, input, afterSilence, long))) as Host["run"],
  };
}

/** The node of an account (404 when there is no such account). */
export async function nodeOfAccount(db: Queryable, accountId: number): Promise<NodeRow> {
  const [row] = await db.select({ node: nodes }).from(hostingAccounts).innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId)).where(eq(hostingAccounts.id, accountId));
  if (!row) throw notFound("Hosting account");
  return row.node;
}

/** The host of the node `name` (404 when there is no such node). */
export async function hostNamed(db: Queryable, name: string): Promise<Host> {
  const node = await findNodeByName(db, name);
  if (!node) throw notFound("Node");
  return hostOfNode(node);
}

/** The host of an account (404 when there is no such account). */
export async function hostOfAccount(db: Queryable, accountId: number): Promise<Host> {
  return hostOfNode(await nodeOfAccount(db, accountId), accountId);
}

/**
 * The database server of an account's machine, as lib/provisioning/mysql.ts's MysqlProvisioner:
 * the panel's own (MYSQL_PROVISION_URL, null without one) for `local`; for another node, its
 * server through its queue — a node without one keeps the records only, as the panel would.
 */
export async function databaseServerOf(db: Queryable, accountId: number): Promise<Pick<MysqlProvisioner, DatabaseServerCall> | null> {
  const host = await hostOfAccount(db, accountId);
  if (host.local) return mysqlProvisioner();
  const call = async (name: DatabaseServerCall, ...args: unknown[]) => (await host.run("databases.call", { call: name, args })).value;
  return {
    createDatabase: async (name) => void (await call("createDatabase", name)),
    dropDatabase: async (name) => void (await call("dropDatabase", name)),
    createUser: async (username, password, options) => void (await call("createUser", username, password, options)),
    dropUser: async (username) => void (await call("dropUser", username)),
    setUserLocked: async (username, locked) => void (await call("setUserLocked", username, locked)),
    setPasswordHash: async (username, hash) => void (await call("setPasswordHash", username, hash)),
    grant: async (username, database, privileges) => void (await call("grant", username, database, privileges)),
    revoke: async (username, database) => void (await call("revoke", username, database)),
    databaseSizesMb: async (names) => new Map((await call("databaseSizesMb", names)) as [string, number][] | undefined),
  };
}

/**
 * After the transaction that waited has ended (rolled back): its connection may be the only one
 * (PGlite), so the reconcile is queued from the panel's own connection on the next turn.
 */
function scheduleAccountReconcile(accountId: number): void {
  setImmediate(() => {
    void (async () => {
      const { queueAccountReconcile } = await import("./reconcile");
      await queueAccountReconcile(await getDb(), accountId);
    })().catch((error) => console.error(`[nodes] could not queue the reconcile of account ${accountId}:`, (error as Error).message));
  });
}
