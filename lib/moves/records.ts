import { and, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Queryable } from "@/db/client";
import { accountMoves, hostingAccounts, nodes } from "@/db/schema";
import type { MoveStepTiming } from "@/db/schema/moves";
import type { MoveRecord } from "./schemas";

// A move's row as the API shows it (./schemas.ts moveSchema).

export type MoveRow = typeof accountMoves.$inferSelect;

/** The states from which DELETE .../move cancels: the source has not stopped for good. */
export const CANCELLABLE_STATES: readonly MoveRow["state"][] = ["queued", "preparing", "copying", "switching"];
/** The states of a move that has not ended. */
export const OPEN_STATES: readonly MoveRow["state"][] = ["queued", "preparing", "copying", "switching", "cleaning", "forwarding", "cancelling"];

/** The coarse state of each step. */
const STATE_OF_STEP: Record<MoveRow["state"], MoveRecord["state"]> = {
  queued: "queued",
  preparing: "running",
  copying: "running",
  switching: "running",
  cleaning: "running",
  forwarding: "running",
  done: "done",
  cancelling: "cancelling",
  cancelled: "cancelled",
};

/** What the move's step waits for (lib/moves/driver.ts waitsUntil), in words, with the seconds left; null when it waits for nothing. */
function waitingOf(move: MoveRow, now = Date.now()): string | null {
  const secondsLeft = (until: Date | null) => (until && until.getTime() > now ? Math.ceil((until.getTime() - now) / 1000) : 0);
  if (move.state === "switching" && secondsLeft(move.cachesClearAt)) return `waiting for DNS caches, ${secondsLeft(move.cachesClearAt)} s left`;
  if (move.state === "forwarding" && secondsLeft(move.forwardUntil)) return `the source forwards to the target, ${secondsLeft(move.forwardUntil)} s left`;
  return null;
}

// Each step's timing (account_moves.steps, GET .../move `steps`): a step begins at its first
// attempt (the queued step when the move is queued) and ends in the UPDATE that changes the
// move's state, so the state and the steps never disagree. Both are written as SQL on the column,
// not from the row the writer read: the driver and a cancel may write the same move at once.

/** The steps of a move just queued: the queued step, begun now. */
export const queuedSteps = (at: Date): MoveStepTiming[] => [{ step: "queued", started_at: at.toISOString(), ended_at: null }];

/** The move's steps with the one that runs (the last, not ended) ended at `at`: for the `set` of every state change. */
export function stepEnded(at: Date): SQL {
  const steps = accountMoves.steps;
  return sql`case when jsonb_array_length(${steps}) > 0 and ${steps}->-1->>'ended_at' is null
    then jsonb_set(${steps}, '{-1,ended_at}', to_jsonb(${at.toISOString()}::text)) else ${steps} end`;
}

/** The move's steps with `step` begun at `at`, unless it is the one that runs already: a step tried again keeps its first start. */
export function stepStarted(step: MoveRow["state"], at: Date): SQL {
  const steps = accountMoves.steps;
  return sql`case when ${steps}->-1->>'step' = ${step}::text and ${steps}->-1->>'ended_at' is null then ${steps}
    else ${steps} || jsonb_build_array(jsonb_build_object('step', ${step}::text, 'started_at', ${at.toISOString()}::text, 'ended_at', null)) end`;
}

/** Whether `step` is the move's running step (begun, not ended) in the steps read. */
export const stepRuns = (move: MoveRow, step: MoveRow["state"]) => move.steps.at(-1)?.step === step && move.steps.at(-1)?.ended_at === null;

export function toMoveRecord(move: MoveRow, source: string, target: string): MoveRecord {
  return {
    id: move.id,
    state: STATE_OF_STEP[move.state],
    step: move.state,
    source,
    target,
    holds_truth: move.switchedAt ? target : source,
    can_cancel: CANCELLABLE_STATES.includes(move.state),
    error: move.error,
    attempts: move.attempts,
    waiting: waitingOf(move),
    created_at: move.createdAt.toISOString(),
    switched_at: move.switchedAt?.toISOString() ?? null,
    finished_at: move.finishedAt?.toISOString() ?? null,
    steps: move.steps.map(({ step, started_at, ended_at }) => ({ step: step as MoveRow["state"], started_at, ended_at })),
  };
}

const sourceNodes = alias(nodes, "source_nodes");
const targetNodes = alias(nodes, "target_nodes");

/** The account's move that has not ended, if it has one (at most one: account_moves_one_open_idx). */
export async function openMoveOf(db: Queryable, accountId: number): Promise<MoveRow | null> {
  const [open] = await db
    .select()
    .from(accountMoves)
    .where(and(eq(accountMoves.accountId, accountId), inArray(accountMoves.state, [...OPEN_STATES])));
  return open ?? null;
}

/** Moves with their accounts' usernames and their nodes' names. */
export function selectMoves(db: Queryable) {
  return db
    .select({ move: accountMoves, account: hostingAccounts.username, source: sourceNodes.name, target: targetNodes.name })
    .from(accountMoves)
    .innerJoin(hostingAccounts, eq(hostingAccounts.id, accountMoves.accountId))
    .innerJoin(sourceNodes, eq(sourceNodes.id, accountMoves.sourceNodeId))
    .innerJoin(targetNodes, eq(targetNodes.id, accountMoves.targetNodeId));
}

/** Each account's latest move (open or ended), by account id. */
export async function latestMoves(db: Queryable, accountIds: number[]): Promise<Map<number, MoveRecord>> {
  const latest = new Map<number, MoveRecord>();
  if (accountIds.length === 0) return latest;
  const rows = await selectMoves(db).where(inArray(accountMoves.accountId, accountIds)).orderBy(desc(accountMoves.id));
  for (const row of rows) if (!latest.has(row.move.accountId)) latest.set(row.move.accountId, toMoveRecord(row.move, row.source, row.target));
  return latest;
}
