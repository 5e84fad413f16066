import { jetstream, type JsMsg } from "@nats-io/jetstream";
import { connect, type NatsConnection, nkeyAuthenticator } from "@nats-io/transport-node";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { readHostFigures } from "@/lib/provisioning/host-figures";
import { mailServerEnabled } from "@/lib/provisioning/mail";
import { type LimitReached, type MailPolicy, startMailPolicy } from "@/lib/provisioning/mail-policy";
import { createSampler, type MachineSample } from "@/lib/provisioning/metrics-sample";
import { mysqlProvisioner, setDatabaseServerNode } from "@/lib/provisioning/mysql";
import type { NodeConfig } from "./config";
import { loadOrCreateIdentity } from "./identity";
import { nodeOperations } from "./operations";
import { natsTls } from "./transport";
import {
  AGENT_VERSION,
  decodeMessage,
  encodeMessage,
  type EventKind,
  eventSubject,
  HEARTBEAT_S,
  type Heartbeat,
  type Hello,
  inboxPrefix,
  type Job,
  type JobResult,
  JOBS_STREAM,
  jobsConsumer,
  LONG_JOB_WORKING_S,
  PROTOCOL_VERSION,
  type Working,
} from "./protocol";

// The node's agent (`panel node agent`, docs/nodes.md "How it works"): connects to NATS with the
// node's own NKEY, says hello on every (re)connect (the panel then queues the reconcile of every
// account of the node), sends a heartbeat every HEARTBEAT_S and a sample of its figures every
// METRICS_INTERVAL_S (the panel keeps them as the node's metrics history), and carries out its
// jobs one at a time, in order: result published, then the job acknowledged (a crash between the
// two runs it again, which an idempotent operation allows). A long job (a backup, a restore: it
// has a deadline) is acknowledged when it starts and runs beside the others, saying every
// LONG_JOB_WORKING_S that it is still at it. It has no database: what it applies is in the job.

/** While a job runs, JetStream is told every so often that it is still being worked on. */
const WORKING_EVERY_MS = 20_000;

async function heartbeat(): Promise<Heartbeat> {
  return { agent_version: AGENT_VERSION, protocol: PROTOCOL_VERSION, ...(await readHostFigures(env().homeRoot)) };
}

/**
 * Runs one job; its result (an AppError's words for a refusal, a fault's words only in this log).
 * A long job's operation is stopped (its signal aborted) at its deadline.
 */
export async function runJob(job: Job): Promise<JobResult> {
  if (job.protocol !== PROTOCOL_VERSION) {
    return { id: job.id, ok: false, error: { code: "INTERNAL", message: `the node's agent speaks protocol ${PROTOCOL_VERSION}, the job ${job.protocol}` } };
  }
  if (job.expires_at !== undefined && Date.now() > job.expires_at) {
    return { id: job.id, ok: false, error: { code: "INTERNAL", message: `${job.op} came after its request had given up; not done` } };
  }
  const operation = Object.hasOwn(nodeOperations, job.op)
    ? (nodeOperations[job.op as keyof typeof nodeOperations] as (args: unknown, signal?: AbortSignal) => Promise<unknown>)
    : undefined;
  if (!operation) return { id: job.id, ok: false, error: { code: "INTERNAL", message: `the node's agent has no operation ${JSON.stringify(job.op)}` } };
  const signal = job.deadline_at === undefined ? undefined : AbortSignal.timeout(Math.max(0, job.deadline_at - Date.now()));
  try {
    return { id: job.id, ok: true, value: (await operation(job.args, signal)) ?? null };
  } catch (error) {
    if (error instanceof AppError && error.code !== "INTERNAL") {
      return { id: job.id, ok: false, error: { code: error.code, message: error.message, fields: error.fieldErrors } };
    }
    console.error(`[agent] ${job.op} failed:`, error);
    return { id: job.id, ok: false, error: { code: "INTERNAL", message: `${job.op} failed on the node; the agent's log says why` } };
  }
}

/**
 * With MAIL_SERVER, the sending limits of this node's accounts (docs/email.md "Sending limits"):
 * its submission services ask this policy service, and each refusal is `report`ed — published as
 * the node's `mail-limit` event, for the panel to flag the account. Not awaited: the flag may
 * follow the refusal by a moment (on the panel's own machine it comes first).
 */
export async function startNodeMailPolicy(report: (event: LimitReached) => void): Promise<MailPolicy | null> {
  if (!mailServerEnabled()) return null;
  return startMailPolicy(env().mail!.policySocket, async (event) => report(event));
}

export interface RunningAgent {
  connection: NatsConnection;
  /** Resolves when the agent has stopped (its connection closed: stop(), or the server refused it). */
  stopped: Promise<void>;
  stop(): Promise<void>;
}

/** Starts the agent of the node `config` names; returns once it is connected and consuming. */
export async function startAgent(config: NodeConfig, seedFile: string): Promise<RunningAgent> {
  const node = config.name;
  // This node's MariaDB server carries its name (docs/nodes.md "Moving accounts": each node needs
  // a MariaDB server of its own): claimed now, so a second node pointed at the same server is
  // refused at its first database job, with the first node's name.
  setDatabaseServerNode(node);
  void mysqlProvisioner()
    ?.claim()
    .catch((error: Error) => console.error(`[agent] the database server: ${error.message}`));
  const identity = await loadOrCreateIdentity(seedFile);
  const connection = await connect({
    servers: config.nats_url,
    ...natsTls(config.nats_url, config.ca_file ?? null),
    name: `agent-${node}`,
    authenticator: nkeyAuthenticator(identity.seed),
    inboxPrefix: inboxPrefix(node),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
  });
  const publish = (kind: EventKind, body: Hello | Heartbeat | JobResult | Working | MachineSample | LimitReached) => {
    if (!connection.isClosed()) connection.publish(eventSubject(node, kind), encodeMessage(body));
  };
  const hello = () => publish("hello", { agent_version: AGENT_VERSION, protocol: PROTOCOL_VERSION });
  hello();
  void (async () => {
    for await (const status of connection.status()) if (status.type === "reconnect") hello();
  })();
  const beat = async () => publish("heartbeat", await heartbeat());
  await beat();
  const beating = setInterval(() => void beat().catch(() => undefined), HEARTBEAT_S * 1000);
  // A first sample at start, as the panel's collector takes one (its sources log their own failures).
  const sampler = createSampler();
  const sample = () =>
    sampler
      .take()
      .then((taken) => publish("metrics", taken))
      .catch((error) => console.error("[agent] a metrics sample failed:", (error as Error).message));
  void sample();
  const sampling = setInterval(() => void sample(), env().metricsIntervalS * 1000);
  const mailPolicy = await startNodeMailPolicy((event) => publish("mail-limit", event));

  const consumer = await jetstream(connection).consumers.get(JOBS_STREAM, jobsConsumer(node));
  const messages = await consumer.consume({ max_messages: 1 });
  const handle = async (message: JsMsg) => {
    let job: Job;
    try {
      job = decodeMessage(message.data) as Job;
    } catch {
      console.error("[agent] a job that is not JSON was dropped");
      message.term();
      return;
    }
    if (job.deadline_at !== undefined) {
      message.ack();
      void runLongJob(job);
      return;
    }
    const working = setInterval(() => message.working(), WORKING_EVERY_MS);
    try {
      publish("result", await runJob(job));
    } finally {
      clearInterval(working);
    }
    message.ack();
  };
  const runLongJob = async (job: Job) => {
    const sayWorking = () => publish("working", { id: job.id });
    sayWorking();
    const working = setInterval(sayWorking, LONG_JOB_WORKING_S * 1000);
    try {
      publish("result", await runJob(job));
    } finally {
      clearInterval(working);
    }
  };
  const consuming = (async () => {
    for await (const message of messages) await handle(message);
  })();

  const stopped = connection.closed().then(async (error) => {
    clearInterval(beating);
    clearInterval(sampling);
    await mailPolicy?.close();
    if (error) console.error(`[agent] the connection to NATS ended: ${error.message}`);
  });
  void consuming.catch((error) => console.error("[agent] consuming jobs stopped:", (error as Error).message));
  return {
    connection,
    stopped,
    async stop() {
      clearInterval(beating);
      clearInterval(sampling);
      messages.stop();
      await connection.drain().catch(() => undefined);
      await stopped;
    },
  };
}
