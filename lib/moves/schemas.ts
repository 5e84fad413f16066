import { z } from "zod";
import { timestamp } from "@/lib/http/operation";

// A move as the API shows it (docs/nodes.md "Moving accounts"): GET /api/admin/accounts/{id}
// (`move`: its latest, open or ended), POST and DELETE /api/admin/accounts/{id}/move, the drain.

/** Where the move is in its state machine (db/schema/moves.ts). */
export const MOVE_STEPS = ["queued", "preparing", "copying", "switching", "cleaning", "forwarding", "done", "cancelling", "cancelled"] as const;
/** The same, coarser: what a billing system or a script waits for. */
export const MOVE_STATES = ["queued", "running", "cancelling", "done", "cancelled"] as const;

export const moveSchema = z.object({
  id: z.number().int(),
  state: z.enum(MOVE_STATES),
  step: z.enum(MOVE_STEPS),
  source: z.string(),
  target: z.string(),
  // The node whose copy of the account is the real one now: the source until the switch commits.
  holds_truth: z.string(),
  // Whether DELETE /api/admin/accounts/{id}/move may still cancel it (before the switch).
  can_cancel: z.boolean(),
  // Why the last attempt of its step failed (it is tried again), and how many it has had.
  error: z.string().nullable(),
  attempts: z.number().int(),
  // What its step waits for, and how long still (docs/nodes.md "Moving accounts"): the switch for
  // the DNS caches of the records' old TTL, the end of the source's forward; null otherwise.
  waiting: z.string().nullable(),
  created_at: timestamp,
  switched_at: timestamp.nullable(),
  finished_at: timestamp.nullable(),
  // Each step as it ran, in order: begun at its first attempt, ended when the move left it
  // (null: the step that runs now). The gaps between them are the driver's waits.
  steps: z.array(z.object({ step: z.enum(MOVE_STEPS), started_at: timestamp, ended_at: timestamp.nullable() })),
});
export type MoveRecord = z.infer<typeof moveSchema>;

/** POST and DELETE /api/admin/accounts/{id}/move answer the move. */
export const moveAnswerSchema = z.object({ move: moveSchema });

export const startMoveSchema = z.object({
  node: z.string().trim().toLowerCase().min(1),
});

export const drainNodeSchema = z.object({
  // Where its accounts go.
  to: z.string().trim().toLowerCase().min(1),
});

export const drainSchema = z.object({
  node: z.string(),
  to: z.string(),
  moves: z.array(moveSchema.extend({ account: z.string() })),
});
