import { and, eq, isNotNull, isNull } from "drizzle-orm";
import type { Database } from "@/db/client";
import { nodeJobs, nodes } from "@/db/schema";
import { finishTermination } from "@/lib/accounts/lifecycle";
import { cleartextWarning } from "@/lib/agent/transport";
import { recordNodeLimitReached } from "@/lib/email/sending";
import { env } from "@/lib/env";
import { recordNodeSample } from "@/lib/metrics/collector";
import { type Bus, ensureNodeConsumer, type NodeEvent, panelBus, subscribeNodeEvents } from "./bus";
import { publishQueuedJobs, recordJobResult } from "./dispatch";
import { queueNodeReconcile } from "./reconcile";
import { applyNodeAuthorization, recordHeartbeat } from "./service";

// What the panel does with its nodes at start (server.ts) when NATS_URL is set: the NATS
// authorization written from the database, a consumer for every enrolled node, and the nodes'
// events handled as they come — each by one panel instance, attributed to the node whose
// subject (and so whose credentials) carried it:
//   hello      the agent (re)connected: the queued work it missed is published, then the whole
//              state of its accounts (lib/nodes/reconcile.ts); at most once per 10 s per node
//              (a sooner one is put off, the rest coalesced), and one reconcile waiting at most
//   heartbeat  its last heartbeat, disk and load
//   metrics    a sample of its figures, kept as its metrics history (lib/metrics/collector.ts)
//   result     a queued job done or failed; a termination's records go once its node removed it

/** How often queued work a stopped panel did not publish is looked for (it is published after its commit otherwise). */
const OUTBOX_SWEEP_MS = 10_000;

/**
 * A node's hello counts at most once per HELLO_EVERY_MS (per panel instance): one that comes
 * sooner is put off to the end of that time, and any more meanwhile are that same one — a flood
 * builds one reconcile, and an agent that really restarted twice still gets its reconcile. A hello
 * put off brings the reconcile only: the word of the agent's version and load it carried is by
 * then older than the heartbeats that followed it.
 */
export const HELLO_EVERY_MS = 10_000;

interface HelloTimes {
  last: number;
  putOff: NodeJS.Timeout | null;
}
/** Per enrolled node's name (checked before an entry is added): bounded by the nodes. */
const globalForEvents = globalThis as unknown as { __panelHellos?: Map<string, HelloTimes>; __panelNodeEvents?: Map<string, NodeEvents> };
const hellos = (globalForEvents.__panelHellos ??= new Map());

/**
 * Whether the node's hello counts now; else one is put off to the end of its HELLO_EVERY_MS
 * (`putOff` runs then), or is put off already and this one is that same one.
 */
function helloCountsNow(node: string, putOff: () => void): boolean {
  const times = hellos.get(node) ?? { last: -Infinity, putOff: null };
  hellos.set(node, times);
  if (times.putOff) return false;
  const wait = times.last + HELLO_EVERY_MS - Date.now();
  if (wait <= 0) {
    times.last = Date.now();
    return true;
  }
  times.putOff = setTimeout(() => {
    times.putOff = null;
    times.last = Date.now();
    putOff();
  }, wait).unref();
  return false;
}

/**
 * A node's events are handled one after another, in the order they came: a hello handled after
 * the heartbeat that followed it would write the older word over the newer. Past
 * MAX_WAITING_EVENTS waiting (a node flooding), its new events are dropped — its own only.
 */
const MAX_WAITING_EVENTS = 1_000;
interface NodeEvents {
  last: Promise<void>;
  waiting: number;
}
const nodeEvents = (globalForEvents.__panelNodeEvents ??= new Map<string, NodeEvents>());

function inOrder(node: string, handle: () => Promise<void>): void {
  const events = nodeEvents.get(node) ?? { last: Promise.resolve(), waiting: 0 };
  nodeEvents.set(node, events);
  if (events.waiting >= MAX_WAITING_EVENTS) return;
  events.waiting++;
  events.last = events.last
    .then(handle)
    .catch((error) => console.error(`[nodes] ${node}:`, (error as Error).message))
    .finally(() => void events.waiting--);
}

export async function startNodeEvents(db: Database): Promise<void> {
  const nats = env().nats;
  if (!nats) return;
  if (nats.insecure) console.warn(cleartextWarning("The panel", nats.url, "NATS_INSECURE=1"));
  // Before connecting: on a first start the server does not know the panel's key yet.
  await applyNodeAuthorization(db);
  // In the background: the panel serves whether or not NATS answers (its nodes then show unreachable).
  void panelBus()!
    .then((bus) => listenToNodes(db, bus))
    .catch((error) => console.error("[nodes] the nodes' events are not listened to:", (error as Error).message));
  setInterval(() => void sweepOutbox(db).catch((error) => console.error("[nodes] publishing queued work:", (error as Error).message)), OUTBOX_SWEEP_MS).unref();
}

async function listenToNodes(db: Database, bus: Bus): Promise<void> {
  for (const { name } of await db.select({ name: nodes.name }).from(nodes).where(isNotNull(nodes.publicKey))) await ensureNodeConsumer(bus, name);
  subscribeNodeEvents(bus, (event) => {
    // A long job's word that it is still at it is for the request waiting on it (lib/nodes/bus.ts).
    if (event.kind === "working") return;
    inOrder(event.node, () => handleNodeEvent(db, event));
  });
}

async function handleNodeEvent(db: Database, { node, kind, body }: NodeEvent): Promise<void> {
  // A subject of a node that is not (or no longer) enrolled: nothing it says counts.
  const [known] = await db.select().from(nodes).where(and(eq(nodes.name, node), isNotNull(nodes.publicKey)));
  if (!known) return;
  if (kind === "heartbeat") await recordHeartbeat(db, node, body);
  if (kind === "metrics") await recordNodeSample(db, known.id, body);
  if (kind === "mail-limit") await recordNodeLimitReached(db, known.id, node, body);
  if (kind === "hello") {
    // The queued work it missed, then the whole state of its accounts (as they are by then) —
    // beside the node's events, not before them: a reconcile that takes long (many accounts, a
    // slow server) must not hold back the heartbeats that say the node is there.
    const reconcile = () => {
      void (async () => {
        const [current] = await db.select().from(nodes).where(and(eq(nodes.name, node), isNotNull(nodes.publicKey)));
        if (current) await queueNodeReconcile(db, current);
      })().catch((error) => console.error(`[nodes] ${node} reconcile:`, (error as Error).message));
    };
    if (helloCountsNow(node, reconcile)) {
      await recordHeartbeat(db, node, body);
      reconcile();
    }
  }
  if (kind === "result") {
    const job = await recordJobResult(db, known.id, body);
    if (job?.kind === "terminate" && job.state === "done" && job.accountId !== null) await finishTermination(db, job.accountId);
  }
}

async function sweepOutbox(db: Database): Promise<void> {
  const waiting = await db.selectDistinct({ nodeId: nodeJobs.nodeId }).from(nodeJobs).where(isNull(nodeJobs.publishedAt));
  for (const { nodeId } of waiting) await publishQueuedJobs(db, nodeId);
}
