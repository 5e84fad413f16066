import { sql } from "drizzle-orm";
import { bigint, check, index, integer, jsonb, pgEnum, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { createdAt, updatedAt } from "./columns";

// Hosting servers (docs/nodes.md "How it works"): the panel's own machine is the node `local` (made
// by the migration); every other node runs an agent that takes its jobs from NATS JetStream. A node
// is
// `unreachable` or `outdated` by its heartbeats (lib/nodes/service.ts), not by a stored state.

export const nodeState = pgEnum("node_state", ["active", "draining"]);

export const nodes = pgTable(
  "nodes",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    // A NATS subject token: the node's subjects are panel.jobs.<name>, panel.events.<name>.…
    name: text("name").notNull().unique(),
    // The A records of its accounts' zones.
    ipv4: text("ipv4"),
    sshHost: text("ssh_host"),
    state: nodeState("state").notNull().default("active"),
    // The agent's NKEY (public part, "U…"): null until `panel node join`; its seed never leaves the node.
    publicKey: text("public_key").unique(),
    // SHA-256 of the one-time enrolment token, and when it expires; null once used.
    enrolmentTokenHash: text("enrolment_token_hash").unique(),
    enrolmentExpiresAt: timestamp("enrolment_expires_at", { withTimezone: true }),
    lastHeartbeatAt: timestamp("last_heartbeat_at", { withTimezone: true }),
    agentVersion: text("agent_version"),
    protocolVersion: integer("protocol_version"),
    // From the last heartbeat: {total_bytes, used_bytes} of HOME_ROOT's file system and the load averages.
    disk: jsonb("disk"),
    load: jsonb("load"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [check("nodes_name_format", sql`${table.name} ~ '^[a-z0-9][a-z0-9-]{0,30}$'`)],
);

export const nodeJobState = pgEnum("node_job_state", ["pending", "done", "failed"]);

/**
 * Work queued for a node that did not answer (suspend, unsuspend, terminate, and the reconcile
 * after a change it missed): an account's `node_sync` is `pending` while one of its rows is, and
 * `failed` when its last finished one failed.
 */
export const nodeJobs = pgTable(
  "node_jobs",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    nodeId: integer("node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    // No foreign key: a terminate's job outlives the account's row only for the moment its result is recorded.
    accountId: integer("account_id"),
    // The job's id on the wire (its result names it).
    jobId: text("job_id").notNull().unique(),
    kind: text("kind").notNull(),
    // The job itself: the row is the outbox it is published from once its transaction committed.
    payload: jsonb("payload").notNull(),
    publishedAt: timestamp("published_at", { withTimezone: true }),
    state: nodeJobState("state").notNull().default("pending"),
    error: text("error"),
    createdAt: createdAt(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (table) => [
    // An account's node_sync: its newest jobs.
    index("node_jobs_account_idx").on(table.accountId, table.id),
  ],
);
