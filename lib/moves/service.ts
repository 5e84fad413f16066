import { randomBytes } from "node:crypto";
import path from "node:path";
import { and, asc, desc, eq, inArray } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { accountMoves, hostingAccounts, nodes } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { env } from "@/lib/env";
import { AppError, notFound, validationError } from "@/lib/errors";
import { type NodeRow } from "@/lib/nodes/hosts";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { findNodeByName, nodeStateOf } from "@/lib/nodes/service";
import { giveBackTtls, lowerMoveTtls, syncZones } from "./dns";
import { CANCELLABLE_STATES, type MoveRow, OPEN_STATES, openMoveOf, queuedSteps, selectMoves, stepEnded, toMoveRecord } from "./records";
import type { drainNodeSchema, MoveRecord, startMoveSchema } from "./schemas";

// Moving accounts between nodes (docs/nodes.md "Moving accounts"): one implementation for the
// API, the admin UI and the command line. These record what is asked — a move, a cancel, a
// drain — and answer at once; lib/moves/driver.ts does the work, step by step.

/** The move's own repository under MOVE_REPOSITORY, and a password made for it. */
function moveRepository(moveKey: string): { repository: string; repositoryPassword: string } {
  const root = env().moveRepository;
  if (!root) throw new AppError("VALIDATION", "Moves need MOVE_REPOSITORY: a restic repository location every node reaches (docs/nodes.md \"Moving accounts\")");
  const repository = path.isAbsolute(root) ? path.join(root, moveKey) : `${root.replace(/\/+$/, "")}/${moveKey}`;
  return { repository, repositoryPassword: randomBytes(32).toString("base64url") };
}

/** Why a node takes no move now (it has not joined, it is draining, its agent is outdated); null when it takes one. */
function refusesMoves(node: NodeRow): string | null {
  if (node.name !== LOCAL_NODE && !node.publicKey) return "has not joined yet";
  if (node.state === "draining") return "is draining: it takes no accounts";
  if (nodeStateOf(node) === "outdated") return "runs an agent older than this panel: update it first";
  return null;
}

/** A target a move may go to (`field` names it in the 422). */
async function targetNode(db: Queryable, name: string, field: string): Promise<NodeRow> {
  const node = await findNodeByName(db, name);
  if (!node) throw validationError(field, `names no node: ${name}`);
  const refusal = refusesMoves(node);
  if (refusal) throw validationError(field, `names the node ${name}, which ${refusal}`);
  return node;
}

/** The names of the nodes a move may go to now (the admin UI's choice). */
export async function moveTargets(db: Queryable): Promise<string[]> {
  const rows = await db.select().from(nodes).orderBy(asc(nodes.name));
  return rows.filter((node) => refusesMoves(node) === null).map((node) => node.name);
}

/**
 * Records a move of `account` to `target` (in `tx`, which has locked the account), queued for the
 * driver. In the same transaction the account's records naming its node get the short TTL
 * (./dns.ts): the switch waits until the caches of their old TTL have run out. The move, and the
 * domains whose zones changed (their files are written after the commit).
 */
async function queueMove(tx: Queryable, account: { id: number; nodeId: number }, target: NodeRow, actor: Actor): Promise<{ move: MoveRow; zones: number[] }> {
  if (await openMoveOf(tx, account.id)) throw new AppError("CONFLICT", "The account is already moving: cancel that move first, or wait until it has ended");
  const key = `move-${account.id}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
  const [source] = await tx.select().from(nodes).where(eq(nodes.id, account.nodeId));
  const { recordTtls, cachesClearAt, zones } = await lowerMoveTtls(tx, account.id, source);
  const [move] = await tx
    .insert(accountMoves)
    .values({ accountId: account.id, sourceNodeId: account.nodeId, targetNodeId: target.id, recordTtls, cachesClearAt, steps: queuedSteps(new Date()), ...moveRepository(key) })
    .returning();
  await recordAudit(tx, actor, { action: "hosting_account.move.start", targetType: "hosting_account", targetId: account.id, details: { move: move.id, to: target.name } });
  return { move, zones };
}

async function moveAnswer(db: Queryable, id: number): Promise<{ move: MoveRecord }> {
  const [row] = await selectMoves(db).where(eq(accountMoves.id, id));
  return { move: toMoveRecord(row.move, row.source, row.target) };
}

/** GET /api/admin/accounts/{id}/move: the account's latest move (open or ended) with its steps; 404 when it has none. */
export async function getMove(db: Queryable, accountId: number): Promise<{ move: MoveRecord }> {
  const [account] = await db.select({ id: hostingAccounts.id }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId));
  if (!account) throw notFound("Hosting account");
  const [row] = await selectMoves(db).where(eq(accountMoves.accountId, accountId)).orderBy(desc(accountMoves.id)).limit(1);
  if (!row) throw notFound("Move of the account");
  return { move: toMoveRecord(row.move, row.source, row.target) };
}

/** POST /api/admin/accounts/{id}/move: the account moves to `node`; 202 with the move (its progress: GET the account). */
export async function startMove(db: Database, accountId: number, input: z.output<typeof startMoveSchema>, actor: Actor): Promise<{ move: MoveRecord }> {
  const { move, zones } = await db.transaction(async (tx) => {
    const [account] = await tx.select().from(hostingAccounts).where(eq(hostingAccounts.id, accountId)).for("update");
    if (!account) throw notFound("Hosting account");
    const target = await targetNode(tx, input.node, "node");
    if (target.id === account.nodeId) throw validationError("node", `is the node the account is on already`);
    return queueMove(tx, account, target, actor);
  });
  await syncZones(db, zones);
  return moveAnswer(db, move.id);
}

/**
 * DELETE /api/admin/accounts/{id}/move: the open move cancelled — allowed until its switch; the
 * source keeps serving, the target's copy goes (the driver removes it). 409 after the switch.
 */
export async function cancelMove(db: Database, accountId: number, actor: Actor): Promise<{ move: MoveRecord }> {
  const { id, zones } = await db.transaction(async (tx) => {
    const [account] = await tx.select({ id: hostingAccounts.id }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId));
    if (!account) throw notFound("Hosting account");
    const move = await openMoveOf(tx, accountId);
    if (!move) throw notFound("Open move of the account");
    if (!CANCELLABLE_STATES.includes(move.state)) {
      throw new AppError("CONFLICT", `The move has switched the account to its new node (${move.state}): it can no longer be cancelled`);
    }
    // A queued move has done nothing anywhere: it simply ends.
    const ended = move.state === "queued";
    const now = new Date();
    // Only from the state read: a switch that committed meanwhile (or a queued move the driver started) is not cancelled by mistake.
    const changed = await tx
      .update(accountMoves)
      .set(ended ? { state: "cancelled", finishedAt: now, repositoryPassword: null, steps: stepEnded(now) } : { state: "cancelling", attempts: 0, error: null, steps: stepEnded(now) })
      .where(and(eq(accountMoves.id, move.id), eq(accountMoves.state, move.state)))
      .returning({ id: accountMoves.id });
    if (changed.length === 0) throw new AppError("CONFLICT", "The move went on to its next step meanwhile: try again");
    await recordAudit(tx, actor, { action: "hosting_account.move.cancel", targetType: "hosting_account", targetId: accountId, details: { move: move.id } });
    // Ended here: its records get their TTL back now (a move being undone gives them back as it ends).
    return { id: move.id, zones: ended ? await giveBackTtls(tx, move) : [] };
  });
  await syncZones(db, zones);
  return moveAnswer(db, id);
}

/**
 * POST /api/admin/nodes/{id}/drain, `panel node drain NAME --to NODE`: the node becomes
 * `draining` (no new accounts) and each of its accounts without an open move is queued to move
 * to `to`; the driver moves them one after another. Its accounts' moves, queued or not.
 */
export async function drainNode(db: Database, nodeId: number, input: z.output<typeof drainNodeSchema>, actor: Actor) {
  const result = await db.transaction(async (tx) => {
    const [node] = await tx.select().from(nodes).where(eq(nodes.id, nodeId)).for("update");
    if (!node) throw notFound("Node");
    const target = await targetNode(tx, input.to, "to");
    if (target.id === node.id) throw validationError("to", "is the node being drained");
    await tx.update(nodes).set({ state: "draining" }).where(eq(nodes.id, nodeId));
    await recordAudit(tx, actor, { action: "node.drain", targetType: "node", targetId: nodeId, details: { name: node.name, to: target.name } });
    const accounts = await tx.select().from(hostingAccounts).where(eq(hostingAccounts.nodeId, nodeId)).orderBy(asc(hostingAccounts.id)).for("update");
    const moving = new Set(
      (await tx.select({ accountId: accountMoves.accountId }).from(accountMoves).where(and(eq(accountMoves.sourceNodeId, nodeId), inArray(accountMoves.state, [...OPEN_STATES])))).map(
        (row) => row.accountId,
      ),
    );
    // All at once, in this transaction: the caches of every account's records run out together,
    // so the accounts moved later do not wait again.
    const zones: number[] = [];
    for (const account of accounts) if (!moving.has(account.id)) zones.push(...(await queueMove(tx, account, target, actor)).zones);
    return { node: node.name, to: target.name, zones };
  });
  await syncZones(db, result.zones);
  return { node: result.node, to: result.to, moves: await nodeMoves(db, nodeId) };
}

/** The moves off a node that have not ended, and those that ended in the last day, oldest first, with their accounts' usernames. */
export async function nodeMoves(db: Queryable, nodeId: number): Promise<(MoveRecord & { account: string })[]> {
  const rows = await selectMoves(db)
    .where(eq(accountMoves.sourceNodeId, nodeId))
    .orderBy(asc(accountMoves.id));
  const dayAgo = Date.now() - 24 * 60 * 60_000;
  return rows
    .filter((row) => OPEN_STATES.includes(row.move.state) || (row.move.finishedAt?.getTime() ?? 0) > dayAgo)
    .map((row) => ({ ...toMoveRecord(row.move, row.source, row.target), account: row.account }));
}
