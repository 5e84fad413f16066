import { setTimeout as sleep } from "node:timers/promises";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import { connect, type NatsConnection, nkeyAuthenticator, type Subscription } from "@nats-io/transport-node";
import {
  ALL_EVENTS,
  decodeMessage,
  encodeMessage,
  type EventKind,
  type Job,
  type JobResult,
  JOBS_STREAM,
  jobsConsumer,
  jobsSubject,
  LONG_JOB_SILENCE_S,
  NODE_NAME,
} from "@/lib/agent/protocol";
import { loadOrCreateIdentity } from "@/lib/agent/identity";
import { natsTls } from "@/lib/agent/transport";
import { jobResultSchema } from "./answers";
import { env } from "@/lib/env";

// The panel's side of NATS (docs/nodes.md "How it works"): one connection per process, with the
// panel's own NKEY, over TLS (lib/agent/transport.ts), made in the background; the jobs stream (a JetStream work queue: a job waits there for a node that is
// down, and leaves it once the node acknowledged it); one durable consumer per node, the only thing
// that node's key may read; and the events every node publishes, attributed by their subject.

/** How long a node has to acknowledge a job before JetStream hands it out again (the agent extends it while it works). */
const ACK_WAIT_NS = 60 * 1_000_000_000;

export interface NodeEvent {
  node: string;
  kind: EventKind;
  body: unknown;
}

export interface Bus {
  connection: NatsConnection;
  manager: JetStreamManager;
  client: JetStreamClient;
  /** The panel's public key (the authorization file lists it). */
  publicKey: string;
}

/**
 * The process's connection, made in the background: the panel never waits on NATS to serve
 * (a server that does not answer, or whose TLS handshake fails, leaves the nodes unreachable and
 * nothing else). `current` is null until the first connection is made; nats.js keeps it up after.
 */
interface BusHolder {
  connecting: Promise<Bus>;
  readonly current: Bus | null;
  close(): Promise<void>;
}

const globalForBus = globalThis as unknown as {
  __panelBus?: BusHolder;
  __panelResultWaiters?: Map<string, ResultWaiter>;
};

/** A request waiting for a job's result: from `node` only; `working`: the job said it is still at it. */
interface ResultWaiter {
  node: string;
  resolve(result: JobResult): void;
  working(): void;
}
const waiters = (globalForBus.__panelResultWaiters ??= new Map());

/** The panel's public key, from its seed file (made on first use), without connecting. */
export async function panelPublicKey(): Promise<string> {
  const nats = env().nats;
  if (!nats) throw new Error("NATS_URL is not set");
  return (await loadOrCreateIdentity(nats.seedFile)).publicKey;
}

/** How long the first connection waits before it is tried again after a failure. */
const RETRY_MS = 2000;

function busHolder(): BusHolder | null {
  const nats = env().nats;
  if (!nats) return null;
  return (globalForBus.__panelBus ??= connectInBackground(nats));
}

function connectInBackground(nats: NonNullable<ReturnType<typeof env>["nats"]>): BusHolder {
  let closed = false;
  let current: Bus | null = null;
  const connecting = (async () => {
    let lastFailure = "";
    for (;;) {
      if (closed) throw new Error("the panel's NATS connection was closed");
      try {
        const bus = await openBus(nats.url, nats.caFile, nats.seedFile);
        if (closed) {
          await bus.connection.close();
          continue;
        }
        current = bus;
        return bus;
      } catch (error) {
        // Said once per reason, not every RETRY_MS (the server may still be loading the
        // authorization that lists the panel's key: a first start).
        const reason = (error as Error).message;
        if (reason !== lastFailure) console.error(`[nodes] NATS at ${nats.url} does not take the panel's connection (${reason}); trying again every ${RETRY_MS / 1000} s`);
        lastFailure = reason;
        await sleep(RETRY_MS);
      }
    }
  })();
  connecting.catch(() => undefined);
  return {
    connecting,
    get current() {
      return current;
    },
    async close() {
      closed = true;
      await current?.connection.drain().catch(() => undefined);
    },
  };
}

/**
 * This process's connection to NATS once it is made (the jobs stream made when missing); null
 * without NATS_URL. It waits as long as it takes: only for work in the background.
 */
export function panelBus(): Promise<Bus> | null {
  return busHolder()?.connecting ?? null;
}

/** The connection if it is made now, else null (the caller leaves its work to a later sweep). */
export function connectedBus(): Bus | null {
  return busHolder()?.current ?? null;
}

/** The connection, waiting at most `ms` for it; null without NATS_URL or when it is not made in time. */
export async function busWithin(ms: number): Promise<Bus | null> {
  const holder = busHolder();
  if (!holder) return null;
  if (holder.current) return holder.current;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
  try {
    return await Promise.race([holder.connecting.catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function openBus(url: string, caFile: string | null, seedFile: string): Promise<Bus> {
  const identity = await loadOrCreateIdentity(seedFile);
  const connection = await connect({
    servers: url,
    ...natsTls(url, caFile),
    name: "hosting-panel",
    authenticator: nkeyAuthenticator(identity.seed),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    // Once connected, a reload that briefly refuses the key is waited out.
    ignoreAuthErrorAbort: true,
  });
  try {
    const manager = await jetstreamManager(connection);
    await ensureJobsStream(manager);
    // Results (and a long job's word that it is still at it) reach the process that waits for
    // them, whichever instance the node answered.
    for (const kind of ["result", "working"] as const) {
      connection.subscribe(`panel.events.*.${kind}`, {
        callback: (error, message) => {
          if (!error) deliverToWaiter(kind, message.subject, message.data);
        },
      });
    }
    return { connection, manager, client: jetstream(connection), publicKey: identity.publicKey };
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
}

async function ensureJobsStream(manager: JetStreamManager): Promise<void> {
  const config = { name: JOBS_STREAM, subjects: ["panel.jobs.*"], retention: RetentionPolicy.Workqueue, storage: StorageType.File };
  try {
    await manager.streams.info(JOBS_STREAM);
  } catch {
    await manager.streams.add(config);
  }
}

/** The node's durable consumer (made once; a work queue allows one per subject). */
export async function ensureNodeConsumer(bus: Bus, node: string): Promise<void> {
  if (!NODE_NAME.test(node)) throw new Error(`not a node name: ${JSON.stringify(node)}`);
  try {
    await bus.manager.consumers.info(JOBS_STREAM, jobsConsumer(node));
  } catch {
    await bus.manager.consumers.add(JOBS_STREAM, {
      durable_name: jobsConsumer(node),
      filter_subject: jobsSubject(node),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      // One job at a time, in order: a node applies an account's changes as they were made.
      max_ack_pending: 1,
      ack_wait: ACK_WAIT_NS,
    });
  }
}

/** A revoked node's consumer and the jobs still waiting for it go. */
export async function removeNodeConsumer(bus: Bus, node: string): Promise<void> {
  await bus.manager.consumers.delete(JOBS_STREAM, jobsConsumer(node)).catch(() => false);
  await bus.manager.streams.purge(JOBS_STREAM, { filter: jobsSubject(node) }).catch(() => undefined);
}

/** Puts a job on the node's queue; the stream's sequence number of it. */
export async function publishJob(bus: Bus, node: string, job: Job): Promise<number> {
  const ack = await bus.client.publish(jobsSubject(node), encodeMessage(job), { msgID: job.id });
  return ack.seq;
}

/**
 * Takes a job back from the queue when no node has acknowledged it yet; false when it is gone
 * (done, or being done).
 */
export async function withdrawJob(bus: Bus, sequence: number): Promise<boolean> {
  return bus.manager.streams.deleteMessage(JOBS_STREAM, sequence, false).catch(() => false);
}

/**
 * The result of job `id` from `node`: null when none came within `firstWithinMs`, when a long job
 * that said it was working went silent for LONG_JOB_SILENCE_S, or when `signal` aborts.
 * `started`: the job said it was working (a long job the node had taken).
 */
export function waitForResult(node: string, id: string, firstWithinMs: number, signal?: AbortSignal): Promise<{ result: JobResult | null; started: boolean }> {
  return new Promise((resolve) => {
    let started = false;
    let timer: NodeJS.Timeout | undefined;
    const end = (result: JobResult | null) => {
      clearTimeout(timer);
      waiters.delete(id);
      signal?.removeEventListener("abort", stop);
      resolve({ result, started });
    };
    const stop = () => end(null);
    const waitUpTo = (ms: number) => {
      clearTimeout(timer);
      timer = setTimeout(stop, ms);
    };
    if (signal?.aborted) return stop();
    signal?.addEventListener("abort", stop, { once: true });
    waitUpTo(firstWithinMs);
    waiters.set(id, {
      node,
      resolve: end,
      working: () => {
        started = true;
        waitUpTo(LONG_JOB_SILENCE_S * 1000);
      },
    });
  });
}

/** A node's result or `working` word, to whoever waits for the job — only when that node is the one the job went to. */
function deliverToWaiter(kind: "result" | "working", subject: string, data: Uint8Array): void {
  const node = subject.split(".")[2];
  let body: { id?: unknown };
  try {
    body = decodeMessage(data) as { id?: unknown };
  } catch {
    return;
  }
  const waiter = typeof body?.id === "string" ? waiters.get(body.id) : undefined;
  if (!waiter || waiter.node !== node) return;
  if (kind === "working") return waiter.working();
  // A result of its form (bounded, a known error code), or the node's fault: never a value the panel did not check.
  const result = jobResultSchema.safeParse(body);
  waiter.resolve(result.success ? result.data : { id: body.id as string, ok: false, error: { code: "INTERNAL", message: "the node answered with something that is not a job's result" } });
}

/**
 * Every node's events, each handled by one panel instance (a queue group): `node` is the
 * subject's node token — what the node's credentials allowed it to publish on — never a name
 * the message carries.
 */
export function subscribeNodeEvents(bus: Bus, handle: (event: NodeEvent) => void): Subscription {
  return bus.connection.subscribe(ALL_EVENTS, {
    queue: "panel",
    callback: (error, message) => {
      if (error) return;
      const [, , node, kind] = message.subject.split(".");
      let body: unknown;
      try {
        body = decodeMessage(message.data);
      } catch {
        console.error(`[nodes] ${node} sent an event that is not JSON`);
        return;
      }
      handle({ node, kind: kind as EventKind, body });
    },
  });
}

/** Closes this process's connection, or stops making it (shutdown, tests). */
export async function closePanelBus(): Promise<void> {
  const holder = globalForBus.__panelBus;
  globalForBus.__panelBus = undefined;
  await holder?.close();
}
