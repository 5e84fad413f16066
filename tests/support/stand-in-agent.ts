import { type ChildProcess, spawn } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, before } from "node:test";
import { createUser } from "@nats-io/nkeys";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Database, Queryable } from "@/db/client";
import { decodeMessage, encodeMessage, type Job, PROTOCOL_VERSION } from "@/lib/agent/protocol";
import { closePanelBus } from "@/lib/nodes/bus";
import { createNodeSchema, joinNodeSchema } from "@/lib/nodes/schemas";
import { createNode, joinNode, recordHeartbeat } from "@/lib/nodes/service";
import { type Backend, createTestDatabase } from "./database";
import { freePort } from "./server";

// Nodes for tests of what the panel stores and decides, in the test's own process: a NATS server
// on loopback without TLS or authorization (the panel runs with NATS_INSECURE=1), and one agent
// standing in for every node — it answers each job on panel.jobs.* at once with a plain value of
// the right shape, does nothing on any machine, and can refuse a job or hold it until released.
// The real agent on real namespace nodes is tests/support/test-node.ts.

export interface OpenNats {
  url: string;
  stop(): Promise<void>;
}

/** A NATS server with JetStream under `root`, open to anyone on 127.0.0.1. */
export async function startOpenNats(root: string): Promise<OpenNats> {
  const port = await freePort();
  fs.mkdirSync(root, { recursive: true });
  const config = path.join(root, "nats-server.conf");
  fs.writeFileSync(config, `listen: "127.0.0.1:${port}"\njetstream { store_dir: "${path.join(root, "jetstream")}" }\n`);
  const child: ChildProcess = spawn("nats-server", ["-c", config], { stdio: "ignore" });
  for (const started = Date.now(); ; ) {
    if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => resolve(Boolean(socket.end())));
      socket.on("error", () => resolve(false));
    });
    if (open) break;
    if (Date.now() - started > 15_000) throw new Error("nats-server did not listen");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** A refusal's words for `job` on `node`, or null to answer it. */
export type Refusal = (node: string, job: Job) => string | null;

/** A restic snapshot id of the exact form the panel checks (64 hex digits). */
export const standInSnapshotId = (digit: string) => digit.repeat(64);

/** A DKIM public key as a node answers it (made once: a stand-in node keeps no private key). */
const standInDkimKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ type: "spki", format: "der" }).toString("base64");

/** The value a node's agent answers `job` with, of the shape the panel checks (lib/nodes/answers.ts). */
function valueOf(job: Job): unknown {
  const args = job.args as Record<string, unknown>;
  switch (job.op) {
    case "ping":
      return { agent_version: "0.0.1", protocol: job.protocol };
    case "account.provision":
      return { username: (args.account as { username: string }).username, userCreated: true, homeWasThere: false, siteDomains: [] };
    case "node.reconcile":
      return { failed: [] };
    case "account.disk-usage":
      return { mb: null, enforced: false };
    case "mail.apply":
      return { settle_ms: 0 };
    case "mail.dkim-key":
      return { public_key: standInDkimKey };
    case "mail.usage":
      return (args.mailboxes as { localPart: string; domain: string }[]).map((mailbox) => ({ address: `${mailbox.localPart}@${mailbox.domain}`, mb: 0 }));
    case "databases.call":
      return { configured: false };
    case "move.snapshot":
      return { home: standInSnapshotId("a"), dumps: [], password_hashes: {} };
    case "backup.parts":
      return { objects: [], password_hashes: {} };
    case "backup.snapshots":
      return [{ id: standInSnapshotId("b"), short_id: "bbbbbbbb", time: "2026-01-01T00:00:00Z", paths: [], tags: args.tags }];
    case "backup.stored-bytes":
      return 4096;
    case "certificates.list":
      return [];
    default:
      return null;
  }
}

export interface StandInAgent {
  refuseWhen(rule: Refusal): void;
  /** The next `op` for `node` waits for `release()`; `reached` resolves once it has come. */
  hold(node: string, op: string): { reached: Promise<void>; release(): void };
  close(): Promise<void>;
}

/** Answers every job of every node on the NATS server at `url`, as their agents would. */
export async function startStandInAgent(url: string): Promise<StandInAgent> {
  const connection: NatsConnection = await connect({ servers: url, name: "stand-in agent" });
  let refuse: Refusal = () => null;
  const holds: { node: string; op: string; reached: () => void; released: Promise<void> }[] = [];
  const answer = async (node: string, job: Job) => {
    const index = holds.findIndex((hold) => hold.node === node && hold.op === job.op);
    if (index >= 0) {
      const [hold] = holds.splice(index, 1);
      hold.reached();
      await hold.released;
    }
    const refusal = refuse(node, job);
    const result = refusal ? { id: job.id, ok: false, error: { code: "VALIDATION", message: refusal } } : { id: job.id, ok: true, value: valueOf(job) };
    connection.publish(`panel.events.${node}.result`, encodeMessage(result));
  };
  connection.subscribe("panel.jobs.*", {
    callback: (error, message) => {
      if (!error) void answer(message.subject.split(".")[2], decodeMessage(message.data) as Job);
    },
  });
  await connection.flush();
  return {
    refuseWhen(rule) {
      refuse = rule;
    },
    hold(node, op) {
      let reached!: () => void;
      let release!: () => void;
      const reachedPromise = new Promise<void>((resolve) => (reached = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.push({ node, op, reached, released });
      return { reached: reachedPromise, release };
    },
    close: () => connection.drain(),
  };
}

/** The stand-in agent of this test file, once useStandInNodes started it. */
let agent: StandInAgent | undefined;

/**
 * For a test file: an open NATS under `root` and the stand-in agent, started before its tests
 * (NATS_URL set for the panel's code in this process) and stopped after them with the panel's
 * own connection. The agent, once started.
 */
export function useStandInNodes(root: string): () => StandInAgent {
  let nats: OpenNats | undefined;
  before(async () => {
    nats = await startOpenNats(path.join(root, "nats"));
    process.env.NATS_URL = nats.url;
    agent = await startStandInAgent(nats.url);
  });
  after(async () => {
    await closePanelBus();
    await agent?.close();
    await nats?.stop();
  });
  return () => agent!;
}

/** A heartbeat as a stand-in node sends it: this panel's protocol, nothing measured. */
export const standInHeartbeat = { agent_version: "0.0.1", protocol: PROTOCOL_VERSION, disk: null, load: [0, 0, 0] };

/** A heartbeat of each of the nodes `names`: active from now. */
export const beatStandInNodes = (db: Queryable, names: string[]) => Promise.all(names.map((name) => recordHeartbeat(db, name, standInHeartbeat)));

/**
 * Runs `run` on a fresh database of `backend` where the nodes `addresses` (name → IPv4) are made,
 * joined as their agents would join (each with a key of its own) and active; then the stand-in
 * agent answers every job again (a refusal the run set does not reach the next) and the database
 * goes.
 */
export async function withStandInNodes(backend: Backend, addresses: Record<string, string>, run: (db: Database) => Promise<void>): Promise<void> {
  const database = await createTestDatabase(backend);
  const connection = await database.open();
  try {
    for (const [name, ipv4] of Object.entries(addresses)) {
      const created = await createNode(connection.db, createNodeSchema.parse({ name, ipv4 }), { type: "cli" });
      await joinNode(connection.db, joinNodeSchema.parse({ token: created.enrolment_token, public_key: createUser().getPublicKey(), agent_version: "0.0.1", protocol: PROTOCOL_VERSION }));
    }
    await beatStandInNodes(connection.db, Object.keys(addresses));
    await run(connection.db);
  } finally {
    agent?.refuseWhen(() => null);
    await connection.close();
    await database.drop();
  }
}
