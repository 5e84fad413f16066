import type { AppErrorCode } from "@/lib/errors";

// What the panel and a node's agent say to each other over NATS (docs/nodes.md "How it works").
// Shared by both sides: nothing here reads the panel's database or the machine.
//
// Subjects, all of a node's own (its NKEY's permissions, rendered by lib/provisioning/nats-auth.ts,
// allow it exactly these):
//   panel.jobs.<node>            jobs for the node: a JetStream work queue (stream PANEL_JOBS),
//                                read through the durable consumer node-<node>
//   panel.events.<node>.<kind>   what the node reports: hello, heartbeat, result, working, metrics,
//                                mail-limit
//   _INBOX_<node>.>              the replies JetStream sends the node

/**
 * Raised when a job or an event changes shape, or the panel asks for operations an older agent
 * lacks; an agent with an older one gets no jobs. 2: long jobs (`deadline_at`, the `working`
 * event) with backups and restores on the node (backup.*, restore.*), metrics (the `metrics`
 * event, metrics.system-info) and certificates made on the node (certificates.*). 3: moves
 * between nodes (move.*). 4: a move's snapshots travel as ids, and its target is told the
 * account's database users by the panel (docs/security.md "Nodes are not trusted"). 5: a moved
 * account's source forwards its sites to the target (forward.*); a move's passes name the site
 * folders to the source too, and the final pass the copy's home snapshot (`copy`): it archives
 * only what changed since (docs/nodes.md "Moving accounts").
 */
export const PROTOCOL_VERSION = 5;

export const AGENT_VERSION = "0.0.1";

/** A node's name: a NATS subject token (and a host-name label). */
export const NODE_NAME = /^[a-z0-9][a-z0-9-]{0,30}$/;

/** An NKEY user's public key. */
export const NKEY_PUBLIC_KEY = /^U[A-Z2-7]{55}$/;

export const JOBS_STREAM = "PANEL_JOBS";
export const jobsSubject = (node: string) => `panel.jobs.${node}`;
export const jobsConsumer = (node: string) => `node-${node}`;
export const eventSubject = (node: string, kind: EventKind) => `panel.events.${node}.${kind}`;
/** What the panel subscribes to: every node's events (the node is the subject's third token). */
export const ALL_EVENTS = "panel.events.*.*";
export const inboxPrefix = (node: string) => `_INBOX_${node}`;

/**
 * working: a long job is still running (every LONG_JOB_WORKING_S); metrics: a sample of the
 * node's figures (lib/provisioning/metrics-sample.ts) every METRICS_INTERVAL_S of the node;
 * mail-limit: a message of one of its accounts was refused for the plan's sending limits
 * (lib/provisioning/mail-policy.ts LimitReached), for the panel to flag the account. A panel
 * that knows no mail-limit ignores it: no new protocol version.
 */
export type EventKind = "hello" | "heartbeat" | "result" | "working" | "metrics" | "mail-limit";

/** Seconds between heartbeats; a node is unreachable after MISSED_HEARTBEATS of them without one. */
export const HEARTBEAT_S = 5;
export const MISSED_HEARTBEATS = 3;

/** Seconds between a long job's `working` events; the panel gives it up after LONG_JOB_SILENCE_S without one. */
export const LONG_JOB_WORKING_S = 5;
export const LONG_JOB_SILENCE_S = 30;

/** One job: an operation of the node's provisioning (lib/agent/operations.ts) and its input. */
export interface Job {
  id: string;
  protocol: number;
  op: string;
  args: unknown;
  /**
   * A change the API waits for (ms since the epoch): past it the request has been answered 503
   * and rolled back, so the node drops the job. Queued work has none. Nodes keep their clocks
   * in step (NTP).
   */
  expires_at?: number;
  /**
   * A long job (a backup, a restore: ms since the epoch): the node takes it off its queue at
   * once and runs it beside its other jobs, stopping it at this moment; while it runs it says so
   * (`working`, every LONG_JOB_WORKING_S). An agent that dies meanwhile loses it: the panel,
   * hearing nothing, answers that the node did not finish.
   */
  deadline_at?: number;
}

/** A long job still running: its id (the `working` event). */
export interface Working {
  id: string;
}

/**
 * A job's outcome: its value, or why it failed — a refusal in the panel's own words with its code
 * (VALIDATION: the API answers 422, NOT_FOUND: 404…), or INTERNAL for a fault (its detail stays
 * in the agent's log).
 */
export type JobResult =
  | { id: string; ok: true; value: unknown }
  | { id: string; ok: false; error: { code: AppErrorCode; message: string; fields?: Record<string, string[]> } };

export interface Hello {
  agent_version: string;
  protocol: number;
}

export interface Heartbeat extends Hello {
  /** HOME_ROOT's file system. */
  disk: { total_bytes: number; used_bytes: number } | null;
  /** 1, 5 and 15 minute load averages. */
  load: number[];
}

/** The subjects a node's NKEY may use: its own jobs, its own events, its own inbox. */
export function nodePermissions(node: string): { publish: string[]; subscribe: string[] } {
  if (!NODE_NAME.test(node)) throw new Error(`not a node name: ${JSON.stringify(node)}`);
  const consumer = `${JOBS_STREAM}.${jobsConsumer(node)}`;
  return {
    publish: [
      `$JS.API.CONSUMER.INFO.${consumer}`,
      `$JS.API.CONSUMER.MSG.NEXT.${consumer}`,
      `$JS.ACK.${consumer}.>`,
      `panel.events.${node}.>`,
    ],
    subscribe: [`${inboxPrefix(node)}.>`],
  };
}

export const encodeMessage = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
export const decodeMessage = (data: Uint8Array): unknown => JSON.parse(new TextDecoder().decode(data));
