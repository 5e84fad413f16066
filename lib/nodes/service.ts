import { createHash, randomBytes } from "node:crypto";
import path from "node:path";
import { and, asc, count, eq, ilike, isNotNull, or } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { hostingAccounts, nodes } from "@/db/schema";
import { HEARTBEAT_S, MISSED_HEARTBEATS, nodePermissions, PROTOCOL_VERSION } from "@/lib/agent/protocol";
import { isCleartext } from "@/lib/agent/transport";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { moveApexRecords } from "@/lib/dns/zone";
import { syncZoneFile } from "@/lib/dns/zone-file-sync";
import { env } from "@/lib/env";
import { AppError, notFound, UnavailableError, validationError } from "@/lib/errors";
import { containsPattern, type ListPage, type ListQuery, listQuerySchema, paged } from "@/lib/list-query";
import { applyNatsAuthorization, type NatsUser } from "@/lib/provisioning/nats";
import { heartbeatSchema } from "./answers";
import { busWithin, ensureNodeConsumer, panelPublicKey, removeNodeConsumer } from "./bus";
import { LOCAL_NODE, type createNodeSchema, type joinNodeSchema, type NODE_STATES, type updateNodeSchema } from "./schemas";
import type { z } from "zod";

// Nodes (docs/nodes.md "How it works"): the hosting servers, `local` (the panel's own machine) and each
// enrolled one. Enrolment: `POST /api/admin/nodes` (or `panel node add`) answers a one-time
// token, valid 15 minutes, of which only a hash is kept; `panel node join` on the node makes
// the node's NKEY there and sends its public key with the token; the panel then lists that key
// in the NATS server's authorization (lib/provisioning/nats.ts) with the node's own subjects only.

const ENROLMENT_MS = 15 * 60_000;
const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

type NodeRow = typeof nodes.$inferSelect;
export type NodeStateName = (typeof NODE_STATES)[number];

/** A node is unreachable once MISSED_HEARTBEATS heartbeats are missing. */
const HEARTBEAT_LIMIT_MS = HEARTBEAT_S * MISSED_HEARTBEATS * 1000;

/** What the node is now: its stored state, unless its agent is silent (unreachable) or too old (outdated). */
export function nodeStateOf(row: Pick<NodeRow, "name" | "state" | "lastHeartbeatAt" | "protocolVersion">, now = Date.now()): NodeStateName {
  if (row.name === LOCAL_NODE) return row.state;
  if (!row.lastHeartbeatAt || now - row.lastHeartbeatAt.getTime() > HEARTBEAT_LIMIT_MS) return "unreachable";
  if ((row.protocolVersion ?? 0) < PROTOCOL_VERSION) return "outdated";
  return row.state;
}

function toNode(row: NodeRow, accounts: number) {
  return {
    id: row.id,
    name: row.name,
    ipv4: nodeAddress(row),
    ssh_host: row.sshHost,
    state: nodeStateOf(row),
    draining: row.state === "draining",
    enrolled: row.name === LOCAL_NODE || row.publicKey !== null,
    last_heartbeat_at: row.lastHeartbeatAt?.toISOString() ?? null,
    agent_version: row.agentVersion,
    accounts,
    disk: (row.disk as { total_bytes: number; used_bytes: number } | null) ?? null,
    load: (row.load as number[] | null) ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

async function accountCounts(db: Queryable): Promise<Map<number, number>> {
  const rows = await db.select({ nodeId: hostingAccounts.nodeId, accounts: count() }).from(hostingAccounts).groupBy(hostingAccounts.nodeId);
  return new Map(rows.map((row) => [row.nodeId, row.accounts]));
}

export type NodeRecord = ReturnType<typeof toNode>;

/** The admin's list: searched by name or address, paged (the account counts beside). */
export async function listNodesPage(db: Queryable, query: ListQuery): Promise<ListPage<NodeRecord>> {
  const { search, ...window } = listQuerySchema.parse(query);
  const pattern = containsPattern(search);
  const where = search ? or(ilike(nodes.name, pattern), ilike(nodes.ipv4, pattern)) : undefined;
  const [rows, [{ total }], counts] = await Promise.all([
    paged(db.select().from(nodes).where(where).orderBy(asc(nodes.id)).$dynamic(), window),
    db.select({ total: count() }).from(nodes).where(where),
    accountCounts(db),
  ]);
  return { rows: rows.map((row) => toNode(row, counts.get(row.id) ?? 0)), total };
}

export async function listNodes(db: Queryable) {
  const [rows, counts] = await Promise.all([db.select().from(nodes).orderBy(asc(nodes.id)), accountCounts(db)]);
  return { nodes: rows.map((row) => toNode(row, counts.get(row.id) ?? 0)) };
}

async function nodeRowOrThrow(db: Queryable, id: number): Promise<NodeRow> {
  const [row] = await db.select().from(nodes).where(eq(nodes.id, id));
  if (!row) throw notFound("Node");
  return row;
}

export async function getNode(db: Queryable, id: number) {
  const row = await nodeRowOrThrow(db, id);
  return toNode(row, (await accountCounts(db)).get(row.id) ?? 0);
}

export async function findNodeByName(db: Queryable, name: string): Promise<NodeRow | null> {
  const [row] = await db.select().from(nodes).where(eq(nodes.name, name));
  return row ?? null;
}

/**
 * The command that enrols a node with `token`, as the panel shows it (`panel node add`, the Nodes
 * page): over https:// and tls://; `--ca` when the NATS server's certificate is signed by the
 * administrator's own CA (NATS_CA_FILE, which they copy to the node); `--insecure` only when this
 * panel itself runs in cleartext (docs/nodes.md "Security").
 */
export function joinCommand(token: string): string {
  const { publicUrl, nats } = env();
  const words = ["npm run panel -- node join", `--panel ${publicUrl}`, `--token ${token}`, `--nats ${nats?.url ?? "tls://NATS-SERVER:4222"}`];
  if (nats?.caFile) words.push(`--ca ${path.basename(nats.caFile)}`);
  if (isCleartext(publicUrl) || nats?.insecure) words.push("--insecure");
  return words.join(" ");
}

/** A new node and its one-time enrolment token (the only time it is shown). */
export async function createNode(db: Database, input: z.output<typeof createNodeSchema>, actor: Actor) {
  if (await findNodeByName(db, input.name)) throw validationError("name", "is already a node's name");
  const token = `hcp_node_${randomBytes(32).toString("base64url")}`;
  const expiresAt = new Date(Date.now() + ENROLMENT_MS);
  const row = await db.transaction(async (tx) => {
    const [created] = await tx
      .insert(nodes)
      .values({ name: input.name, ipv4: input.ipv4, sshHost: input.ssh_host ?? null, enrolmentTokenHash: hashToken(token), enrolmentExpiresAt: expiresAt })
      .returning();
    await recordAudit(tx, actor, { action: "node.create", targetType: "node", targetId: created.id, details: { name: created.name } });
    return created;
  });
  return { ...toNode(row, 0), enrolment_token: token, enrolment_expires_at: expiresAt.toISOString() };
}

export async function updateNode(db: Database, id: number, input: z.output<typeof updateNodeSchema>, actor: Actor) {
  const movedZones = await db.transaction(async (tx) => {
    const [row] = await tx.select().from(nodes).where(eq(nodes.id, id)).for("update");
    if (!row) throw notFound("Node");
    if (input.name !== undefined && input.name !== row.name) {
      // A node's subjects, consumer and NKEY permissions are named after it.
      if (row.name === LOCAL_NODE || row.publicKey) throw validationError("name", "cannot change once the node has joined");
      if (await findNodeByName(tx, input.name)) throw validationError("name", "is already a node's name");
    }
    await tx
      .update(nodes)
      .set({
        name: input.name ?? row.name,
        ipv4: input.ipv4 ?? row.ipv4,
        sshHost: input.ssh_host === undefined ? row.sshHost : input.ssh_host,
        state: input.state ?? row.state,
      })
      .where(eq(nodes.id, id));
    await recordAudit(tx, actor, { action: "node.update", targetType: "node", targetId: id, details: input });
    // Its accounts' zones follow its address.
    const from = nodeAddress(row);
    return input.ipv4 !== undefined && from !== null && input.ipv4 !== from ? moveApexRecords(tx, id, from, input.ipv4) : [];
  });
  for (const domainId of movedZones) await syncZoneFile(db, domainId);
  return getNode(db, id);
}

/** The address its accounts' zones point to: the panel's own machine's is SERVER_IPV4 unless set. */
export const nodeAddress = (node: typeof nodes.$inferSelect): string | null => (node.name === LOCAL_NODE ? (node.ipv4 ?? env().serverIpv4) : node.ipv4);

/** Revokes a node: its key leaves the NATS authorization (its session ends), its queue goes. */
export async function deleteNode(db: Database, id: number, actor: Actor): Promise<{ message: string }> {
  const row = await nodeRowOrThrow(db, id);
  if (row.name === LOCAL_NODE) throw validationError("node", "local is the panel's own machine and cannot be removed");
  const accounts = (await accountCounts(db)).get(id) ?? 0;
  if (accounts > 0) throw validationError("node", `still hosts ${accounts} account(s): move them first`);
  await db.transaction(async (tx) => {
    await tx.delete(nodes).where(eq(nodes.id, id));
    await recordAudit(tx, actor, { action: "node.delete", targetType: "node", targetId: id, details: { name: row.name } });
  });
  await applyNodeAuthorization(db);
  // Its queue goes with it; a panel not connected to NATS leaves it to the next start (lib/nodes/events.ts).
  const bus = await busWithin(env().nodeJobTimeoutMs);
  if (bus) await removeNodeConsumer(bus, row.name);
  return { message: `Node ${row.name} removed: its credentials no longer connect` };
}

/** How long a join waits for the panel's connection to NATS (made in the background at its start). */
const JOIN_WAITS_FOR_NATS_MS = 30_000;

/**
 * `panel node join`: the node's public key for a valid, unused, unexpired token. The key is
 * listed in the NATS authorization before this answers, so the agent can connect at once.
 */
export async function joinNode(db: Database, input: z.output<typeof joinNodeSchema>) {
  if (!env().nats) throw new AppError("UNAVAILABLE", "This panel has no NATS server (NATS_URL): it cannot take nodes");
  // Before the token is used: a join the panel cannot complete leaves it for another try. A panel
  // that has just started may still be connecting (in the background): the join waits for it.
  const bus = await busWithin(JOIN_WAITS_FOR_NATS_MS);
  if (!bus) throw new UnavailableError("The panel cannot reach its NATS server now; try the join again later", 30);
  const joined = await db.transaction(async (tx) => {
    const [row] = await tx.select().from(nodes).where(eq(nodes.enrolmentTokenHash, hashToken(input.token))).for("update");
    // One answer for unknown, used and expired tokens: none tells which.
    if (!row || !row.enrolmentExpiresAt || row.enrolmentExpiresAt.getTime() < Date.now()) {
      throw new AppError("UNAUTHORIZED", "The enrolment token is unknown or expired: make a new one with `panel node add` or the Nodes page");
    }
    const [taken] = await tx.select({ id: nodes.id }).from(nodes).where(eq(nodes.publicKey, input.public_key));
    if (taken) throw validationError("public_key", "is already another node's key");
    const [updated] = await tx
      .update(nodes)
      .set({ publicKey: input.public_key, enrolmentTokenHash: null, enrolmentExpiresAt: null, agentVersion: input.agent_version, protocolVersion: input.protocol })
      .where(eq(nodes.id, row.id))
      .returning();
    await recordAudit(tx, { type: "system" }, { action: "node.join", targetType: "node", targetId: row.id, details: { name: row.name, public_key: input.public_key } });
    return updated;
  });
  await ensureNodeConsumer(bus, joined.name);
  await applyNodeAuthorization(db);
  return { name: joined.name, protocol: PROTOCOL_VERSION };
}

/**
 * The NATS server's authorization from the database: the panel (every subject) and each
 * enrolled node (its own subjects); reloaded when it changed. Without NATS_AUTH_FILE the
 * administrator keeps the server's authorization by hand (docs/nodes.md "Three machines, step by
 * step").
 */
export async function applyNodeAuthorization(db: Queryable): Promise<void> {
  const nats = env().nats;
  if (!nats?.authFile) return;
  const enrolled = await db
    .select({ name: nodes.name, publicKey: nodes.publicKey })
    .from(nodes)
    .where(isNotNull(nodes.publicKey))
    .orderBy(asc(nodes.id));
  const users: NatsUser[] = [
    { publicKey: await panelPublicKey(), permissions: null, comment: "panel" },
    ...enrolled.map((node) => ({ publicKey: node.publicKey!, permissions: nodePermissions(node.name), comment: node.name })),
  ];
  const reloadFailure = await applyNatsAuthorization(nats.authFile, users, nats.reloadCommand);
  if (reloadFailure) {
    console.error(`[nodes] the NATS server did not reload its authorization: ${reloadFailure}`);
    throw new AppError("INTERNAL", "The NATS server did not reload its authorization; the panel's log says why");
  }
}

/**
 * A hello or heartbeat of `node` (the subject's, not the message's): when it was and what its
 * agent speaks; a heartbeat also carries HOME_ROOT's disk and the load averages.
 */
export async function recordHeartbeat(db: Queryable, node: string, body: unknown): Promise<void> {
  // Bounded figures of its form, or nothing at all: a malformed beat does not count as one.
  const parsed = heartbeatSchema.safeParse(body);
  if (!parsed.success) {
    console.error(`[nodes] ${node} sent a hello or heartbeat that is not one; dropped`);
    return;
  }
  const beat = parsed.data;
  const measured = beat.load === undefined ? {} : { disk: beat.disk ?? null, load: beat.load };
  await db
    .update(nodes)
    .set({
      lastHeartbeatAt: new Date(),
      agentVersion: beat.agent_version,
      protocolVersion: beat.protocol,
      ...measured,
    })
    .where(and(eq(nodes.name, node), isNotNull(nodes.publicKey)));
}

/**
 * Where a new account goes: the node named (it must exist, be active, answer and speak this
 * panel's protocol), else the active answering node with the fewest accounts.
 */
export async function nodeForNewAccount(db: Queryable, name?: string | null): Promise<NodeRow> {
  const rows = await db.select().from(nodes).orderBy(asc(nodes.id));
  if (name !== undefined && name !== null) {
    const row = rows.find((candidate) => candidate.name === name);
    if (!row) throw validationError("node", "names no node");
    const state = nodeStateOf(row);
    if (state !== "active") throw validationError("node", `is ${state}: it takes no new accounts`);
    return row;
  }
  const counts = await accountCounts(db);
  const candidates = rows.filter((row) => nodeStateOf(row) === "active");
  if (candidates.length === 0) throw validationError("node", "no active node can take the account");
  return candidates.reduce((best, row) => ((counts.get(row.id) ?? 0) < (counts.get(best.id) ?? 0) ? row : best));
}

/** The `local` node's id (made by the migration). */
export async function localNodeId(db: Queryable): Promise<number> {
  const [row] = await db.select({ id: nodes.id }).from(nodes).where(eq(nodes.name, LOCAL_NODE));
  return row.id;
}

