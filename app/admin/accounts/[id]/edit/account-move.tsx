"use client";

import { useAdminAction } from "@/components/form";
import { NodeChoiceForm } from "@/components/node-choice-form";
import { RefreshWhile } from "@/components/refresh-while";
import { Time } from "@/components/time";
import type { MoveRecord } from "@/lib/moves/schemas";
import { cancelMoveAction, moveAccountAction } from "../../actions";

/** What each step of a move means to the admin watching it. */
const STEP_TEXT: Record<MoveRecord["step"], string> = {
  queued: "waiting for the moves before it from the same node",
  preparing: "making the account on the new node (suspended there until the switch)",
  copying: "copying its files and databases while the site keeps serving",
  switching: "the site is paused for the last changes; then its DNS points to the new node",
  cleaning: "served by the new node; removing it from the old one",
  forwarding: "served by the new node; the old one forwards its visitors there until their DNS caches have the new address",
  done: "done",
  cancelling: "cancelling: removing the copy from the new node",
  cancelled: "cancelled",
};

const hasEnded = (move: MoveRecord) => move.state === "done" || move.state === "cancelled";

/**
 * The node that hosts the account, and its move to another: the move's step while it goes on
 * (the page reads itself again every 3 s), Cancel while the source still holds the truth, and
 * otherwise a choice of the nodes it may go to.
 */
export function AccountMove({ account, move, targets }: { account: { id: number; node: string }; move: MoveRecord | null; targets: string[] }) {
  const { pending, state, fieldError, run } = useAdminAction();
  const open = move && !hasEnded(move) ? move : null;
  const ended = move && hasEnded(move) ? move : null;

  return (
    <section className="card" aria-label="Node">
      <h2>Node</h2>
      <RefreshWhile active={open !== null} />
      {state?.error && !fieldError("node") && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      <p>
        Hosted on <strong>{account.node}</strong>.
      </p>
      {open ? (
        <div role="status" aria-label="Move">
          <p>
            Moving from <strong>{open.source}</strong> to <strong>{open.target}</strong>: <strong>{open.step}</strong> — {STEP_TEXT[open.step]}.
          </p>
          {open.waiting && <p aria-label="Waiting">{open.waiting[0].toUpperCase() + open.waiting.slice(1)}.</p>}
          {open.error && (
            <p className="notice">
              Last attempt: {open.error}
              {open.attempts > 0 && ` (${open.attempts} failed)`}
            </p>
          )}
          {open.can_cancel && (
            <button type="button" disabled={pending} onClick={() => run(() => cancelMoveAction(account.id))}>
              Cancel the move
            </button>
          )}
        </div>
      ) : (
        <>
          {ended && (
            <p className="muted" aria-label="Last move">
              Last move, to {ended.target}: <strong>{ended.step}</strong> <Time at={ended.finished_at} />
              {ended.error && ` — ${ended.error}`}
            </p>
          )}
          <NodeChoiceForm
            id="move-target"
            label="Move to"
            hint="Its site keeps serving while it is copied; it pauses for the last changes only."
            error={fieldError("node")}
            nodes={targets}
            submit="Move"
            pending={pending}
            onChoose={(target) => run(() => moveAccountAction(account.id, target))}
          />
        </>
      )}
    </section>
  );
}
