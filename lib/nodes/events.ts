import { and, eq, isNotNull } from "drizzle-orm";
import type { Database } from "@/db/client";
import { nodes } from "@/db/schema";
import type { Heartbeat, Hello, JobResult } from "@/lib/agent/protocol";
import { env } from "@/lib/env";
import { ensureNodeConsumer, panelBus, subscribeNodeEvents } from "./bus";
import { publishQueuedJobs, recordJobResult } from "./dispatch";
import { applyNodeAuthorization, recordHeartbeat } from "./service";

// What the panel does with its nodes at start (server.ts) when NATS_URL is set: the NATS
// authorization written from the database, a consumer for every enrolled node, and the nodes'
// events handled as they come — each by one panel instance, attributed to the node whose
// subject (and so whose credentials) carried it.

export async function startNodeEvents(db: Database): Promise<void> {
  if (!env().nats) return;
  // Before connecting: on a first start the server does not know the panel's key yet.
  await applyNodeAuthorization(db);
  const bus = await panelBus()!;
  for (const { name } of await db.select({ name: nodes.name }).from(nodes).where(isNotNull(nodes.publicKey))) await ensureNodeConsumer(bus, name);
  subscribeNodeEvents(bus, async ({ node, kind, body }) => {
    // A subject of a node that is not (or no longer) enrolled: nothing it says counts.
    const [known] = await db.select({ id: nodes.id }).from(nodes).where(and(eq(nodes.name, node), isNotNull(nodes.publicKey)));
    if (!known) return;
    if (kind === "heartbeat") await recordHeartbeat(db, node, body as Heartbeat);
    if (kind === "hello") {
      await recordHeartbeat(db, node, body as Hello);
      // Queued work that could not be published while the node was away (or the panel down).
      await publishQueuedJobs(db, known.id);
    }
    if (kind === "result") await recordJobResult(db, known.id, body as JobResult);
  });
}
