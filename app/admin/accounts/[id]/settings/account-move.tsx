"use client";

import { useSyncExternalStore } from "react";
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

// The running step's time counts every second, in the browser only (null while rendering on the server).
const everySecond = (changed: () => void) => {
  const timer = setInterval(changed, 1000);
  return () => clearInterval(timer);
};
const currentSecond = () => Math.floor(Date.now() / 1000) * 1000;

/** "0.4 s", "12 s", "3 min 05 s". */
function duration(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  return `${Math.floor(seconds / 60)} min ${String(Math.round(seconds % 60)).padStart(2, "0")} s`;
}

/** Each step of the move as it ran: when it began, how long it took (the running one counting). */
function MoveSteps({ steps }: { steps: MoveRecord["steps"] }) {
  const now = useSyncExternalStore(everySecond, currentSecond, () => null);
  if (steps.length === 0) return null;
  return (
    <div className="table-scroll" style={{ margin: "0.75rem 0" }}>
      <table className="data" aria-label="Steps">
        <thead>
          <tr>
            <th>Step</th>
            <th>Started</th>
            <th>Took</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((step) => (
            <tr key={step.step}>
              <td>{step.step}</td>
              <td>
                <Time at={step.started_at} />
              </td>
              <td>
                {step.ended_at
                  ? duration(Date.parse(step.ended_at) - Date.parse(step.started_at))
                  : `running${now === null ? "" : `, ${duration(now - Date.parse(step.started_at))}`}`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The node that hosts the account, and its move to another: the move's step while it goes on
 * (the page reads itself again every 3 s) and the time each step took, Cancel while the source
 * still holds the truth, and otherwise the last move's steps and a choice of the nodes it may go to.
 */
export function AccountMove({ account, move, targets }: { account: { id: number; node: string }; move: MoveRecord | null; targets: string[] }) {
  const { pending, state, fieldError, run } = useAdminAction();
  const open = move && !hasEnded(move) ? move : null;
  const ended = move && hasEnded(move) ? move : null;

  return (
    <section className="card" id="node" aria-label="Node">
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
        <>
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
              <button type="button" disabled={pending} onClick={() => run(() => cancelMoveAction(account.id), undefined, "The move is being cancelled.")}>
                Cancel the move
              </button>
            )}
          </div>
          {/* Outside the status region: its running time changes every second. */}
          <MoveSteps steps={open.steps} />
        </>
      ) : (
        <>
          {ended && (
            <p className="muted" aria-label="Last move">
              Last move, to {ended.target}: <strong>{ended.step}</strong> <Time at={ended.finished_at} />
              {ended.error && ` — ${ended.error}`}
            </p>
          )}
          {ended && <MoveSteps steps={ended.steps} />}
          <NodeChoiceForm
            id="move-target"
            label="Move to"
            hint="Its site keeps serving while it is copied; it pauses for the last changes only."
            error={fieldError("node")}
            nodes={targets}
            submit="Move"
            pending={pending}
            onChoose={(target) => run(() => moveAccountAction(account.id, target), undefined, `Move to ${target} started.`)}
          />
        </>
      )}
    </section>
  );
}
