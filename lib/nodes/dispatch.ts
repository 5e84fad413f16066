import { randomUUID } from "node:crypto";
import { and, asc, desc, eq, inArray, isNull } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { nodeJobs, nodes } from "@/db/schema";
import { type Job, type JobResult, PROTOCOL_VERSION } from "@/lib/agent/protocol";
import { env } from "@/lib/env";
import { AppError, UnavailableError } from "@/lib/errors";
import { jobResultSchema } from "./answers";
import { busWithin, connectedBus, publishJob, waitForResult, withdrawJob } from "./bus";
import { nodeStateOf } from "./service";

// Work for a node other than `local` (docs/nodes.md "What the API promises"), two ways:
//   - now: a change the API answers when it is done (most of them). The job goes on the node's
//     queue and the request waits for its result, at most NODE_JOB_TIMEOUT_S: a refusal is a 422
//     (the change is rolled back with its transaction), silence a 503 naming the node (the job is
//     taken back from the queue, a node that had it already drops it past its expiry, and a
//     reconcile of the account follows, so the node ends as the database says).
//   - queued: what a billing system must not lose while the node is away (suspend, unsuspend,
//     terminate): recorded in node_jobs and left on the queue, carried out in order when the node
//     is back; the account's node_sync is `pending` until its result comes.

type NodeRow = typeof nodes.$inferSelect;

/** How long a client is asked to wait before trying again a change its node did not answer. */
export const NODE_RETRY_AFTER_S = 30;

export class NodeUnavailableError extends UnavailableError {
  constructor(readonly node: string) {
    super(`The node ${node} does not answer; nothing was changed. Try again later.`, NODE_RETRY_AFTER_S);
  }
}

function newJob(op: string, args: unknown, times: { expiresAt?: number; deadlineAt?: number } = {}): Job {
  return {
    id: randomUUID(),
    protocol: PROTOCOL_VERSION,
    op,
    args,
    ...(times.expiresAt === undefined ? {} : { expires_at: times.expiresAt }),
    ...(times.deadlineAt === undefined ? {} : { deadline_at: times.deadlineAt }),
  };
}

/** A node's refusal as the panel's error: its words for a refusal, generic words for a fault. */
function resultError(node: string, result: Extract<JobResult, { ok: false }>): AppError {
  if (result.error.code !== "INTERNAL") return new AppError(result.error.code, result.error.message, result.error.fields);
  console.error(`[nodes] ${node}: ${result.error.message}`);
  return new AppError("INTERNAL", `The node ${node} could not complete the request; its agent's log says why`);
}

/** Whether jobs can be given to the node now: its agent answers heartbeats and speaks this protocol. */
export const nodeTakesJobs = (node: NodeRow) => {
  const state = nodeStateOf(node);
  return state !== "unreachable" && state !== "outdated";
};

/**
 * How a long operation (a backup, a restore) runs: stopped at `deadlineMs` from now, and no
 * longer waited for when `signal` aborts (on another node it then goes on until its deadline).
 */
export interface LongRun {
  deadlineMs: number;
  signal?: AbortSignal;
}

/**
 * Runs `op` on `node` and waits for its value. `afterSilence`: what to queue for the node when it
 * did not answer in time (a reconcile of the account), or nothing. `long`: a long job, which the
 * node runs beside its other jobs and the request waits for as long as the node says it is at it.
 */
export async function runOnNodeNow(node: NodeRow, op: string, args: unknown, afterSilence?: () => Promise<void>, long?: LongRun): Promise<unknown> {
  if (!nodeTakesJobs(node)) throw new NodeUnavailableError(node.name);
  const timeoutMs = env().nodeJobTimeoutMs;
  const bus = await busWithin(timeoutMs);
  if (!bus) throw new NodeUnavailableError(node.name);
  const job = newJob(op, args, { expiresAt: Date.now() + timeoutMs, deadlineAt: long && Date.now() + long.deadlineMs });
  const answer = waitForResult(node.name, job.id, timeoutMs, long?.signal);
  const sequence = await publishJob(bus, node.name, job);
  const { result, started } = await answer;
  if (!result) {
    if (long?.signal?.aborted) throw long.signal.reason;
    // Taken back if it is still queued; a node that had it already drops it past its expiry, and
    // the reconcile that follows undoes whatever it did meanwhile.
    if (!started) await withdrawJob(bus, sequence);
    await afterSilence?.();
    throw started ? new UnavailableError(`The node ${node.name} stopped answering before it had finished; try again later`, NODE_RETRY_AFTER_S) : new NodeUnavailableError(node.name);
  }
  if (!result.ok) throw resultError(node.name, result);
  return result.value;
}

/**
 * Queues `op` for `node` without waiting: a node_jobs row written in `db`'s transaction (the
 * outbox), published by publishQueuedJobs once that transaction committed — so a rolled-back
 * change queues nothing, and a panel that stops in between publishes it at its next chance.
 */
export async function queueOnNode(db: Queryable, node: NodeRow, accountId: number | null, kind: string, op: string, args: unknown): Promise<void> {
  const job = newJob(op, args);
  await db.insert(nodeJobs).values({ nodeId: node.id, accountId, jobId: job.id, kind, payload: job });
}

/**
 * Publishes the node's queued jobs not yet on its queue, oldest first (after a change committed,
 * and whenever the node says hello). Each is published once; JetStream's de-duplication by job
 * id covers a panel that stopped between publishing one and noting it.
 */
export async function publishQueuedJobs(db: Queryable, nodeId: number): Promise<void> {
  // Not connected yet: the sweep publishes it once the connection is made.
  const bus = connectedBus();
  if (!bus) return;
  const [node] = await db.select().from(nodes).where(eq(nodes.id, nodeId));
  // An agent older than the panel gets nothing: its work waits until it is updated.
  if (!node || (node.protocolVersion ?? 0) < PROTOCOL_VERSION) return;
  const waiting = await db
    .select({ id: nodeJobs.id, payload: nodeJobs.payload })
    .from(nodeJobs)
    .where(and(eq(nodeJobs.nodeId, nodeId), isNull(nodeJobs.publishedAt)))
    .orderBy(asc(nodeJobs.id));
  for (const row of waiting) {
    await publishJob(bus, node.name, row.payload as Job);
    await db.update(nodeJobs).set({ publishedAt: new Date() }).where(eq(nodeJobs.id, row.id));
  }
}

/** A node's result for a queued job: its row done or failed. Only the node the job went to can finish it. */
export async function recordJobResult(db: Queryable, nodeId: number, body: unknown): Promise<typeof nodeJobs.$inferSelect | null> {
  const parsed = jobResultSchema.safeParse(body);
  if (!parsed.success) return null;
  const result = parsed.data;
  const [row] = await db
    .update(nodeJobs)
    .set({ state: result.ok ? "done" : "failed", error: result.ok ? null : result.error.message.slice(0, 500), finishedAt: new Date() })
    .where(and(eq(nodeJobs.jobId, result.id), eq(nodeJobs.nodeId, nodeId), eq(nodeJobs.state, "pending")))
    .returning();
  return row ?? null;
}

export type NodeSync = { node_sync: "ok" | "pending" | "failed"; node_error: string | null };

/** Each account's node_sync: pending while a queued job of it waits, failed when its last one failed. */
export async function nodeSyncOf(db: Queryable, accountIds: number[]): Promise<Map<number, NodeSync>> {
  const sync = new Map<number, NodeSync>(accountIds.map((id) => [id, { node_sync: "ok", node_error: null }]));
  if (accountIds.length === 0) return sync;
  const rows = await db
    .select({ accountId: nodeJobs.accountId, state: nodeJobs.state, error: nodeJobs.error })
    .from(nodeJobs)
    .where(inArray(nodeJobs.accountId, accountIds))
    .orderBy(desc(nodeJobs.id));
  const seen = new Set<number>();
  for (const row of rows) {
    const id = row.accountId!;
    if (row.state === "pending") sync.set(id, { node_sync: "pending", node_error: null });
    else if (!seen.has(id) && sync.get(id)!.node_sync !== "pending" && row.state === "failed") sync.set(id, { node_sync: "failed", node_error: row.error });
    seen.add(id);
  }
  return sync;
}
