import { and, eq, isNotNull, isNull } from "drizzle-orm";
import type { Database } from "@/db/client";
import { nodeJobs, nodes } from "@/db/schema";
import { finishTermination } from "@/lib/accounts/lifecycle";
import { env } from "@/lib/env";
import { recordNodeSample } from "@/lib/metrics/collector";
import { ensureNodeConsumer, panelBus, subscribeNodeEvents } from "./bus";
import { publishQueuedJobs, recordJobResult } from "./dispatch";
import { queueNodeReconcile } from "./reconcile";
import { applyNodeAuthorization, recordHeartbeat } from "./service";

// What the panel does with its nodes at start (server.ts) when NATS_URL is set: the NATS
// authorization written from the database, a consumer for every enrolled node, and the nodes'
// events handled as they come — each by one panel instance, attributed to the node whose
// subject (and so whose credentials) carried it:
//   hello      the agent (re)connected: the queued work it missed is published, then the whole
//              state of its accounts (lib/nodes/reconcile.ts)
//   heartbeat  its last heartbeat, disk and load
//   metrics    a sample of its figures, kept as its metrics history (lib/metrics/collector.ts)
//   result     a queued job done or failed; a termination's records go once its node removed it

/** How often queued work a stopped panel did not publish is looked for (it is published after its commit otherwise). */
const OUTBOX_SWEEP_MS = 10_000;

export async function startNodeEvents(db: Database): Promise<void> {
  if (!env().nats) return;
  // Before connecting: on a first start the server does not know the panel's key yet.
  await applyNodeAuthorization(db);
  const bus = await panelBus()!;
  for (const { name } of await db.select({ name: nodes.name }).from(nodes).where(isNotNull(nodes.publicKey))) await ensureNodeConsumer(bus, name);
  subscribeNodeEvents(bus, async ({ node, kind, body }) => {
    // A long job's word that it is still at it is for the request waiting on it (lib/nodes/bus.ts).
    if (kind === "working") return;
    // A subject of a node that is not (or no longer) enrolled: nothing it says counts.
    const [known] = await db.select().from(nodes).where(and(eq(nodes.name, node), isNotNull(nodes.publicKey)));
    if (!known) return;
    if (kind === "heartbeat") await recordHeartbeat(db, node, body);
    if (kind === "metrics") await recordNodeSample(db, known.id, body);
    if (kind === "hello") {
      await recordHeartbeat(db, node, body);
      await publishQueuedJobs(db, known.id);
      await queueNodeReconcile(db, known);
    }
    if (kind === "result") {
      const job = await recordJobResult(db, known.id, body);
      if (job?.kind === "terminate" && job.state === "done" && job.accountId !== null) await finishTermination(db, job.accountId);
    }
  });
  setInterval(() => void sweepOutbox(db).catch((error) => console.error("[nodes] publishing queued work:", (error as Error).message)), OUTBOX_SWEEP_MS).unref();
}

async function sweepOutbox(db: Database): Promise<void> {
  const waiting = await db.selectDistinct({ nodeId: nodeJobs.nodeId }).from(nodeJobs).where(isNull(nodeJobs.publishedAt));
  for (const { nodeId } of waiting) await publishQueuedJobs(db, nodeId);
}
