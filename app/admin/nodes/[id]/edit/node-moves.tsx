"use client";

import { useAdminAction } from "@/components/form";
import { NodeChoiceForm } from "@/components/node-choice-form";
import { RefreshWhile } from "@/components/refresh-while";
import { Time } from "@/components/time";
import type { MoveRecord } from "@/lib/moves/schemas";
import { drainNodeAction } from "../../actions";

type NodeMove = MoveRecord & { account: string };

/**
 * Drain (docs/nodes.md "Moving accounts"): every account of the node moved to another, one after
 * another; and the moves off the node, read again every 3 s while one has not ended.
 */
export function NodeMoves({ node, moves, targets }: { node: { id: number; name: string; accounts: number }; moves: NodeMove[]; targets: string[] }) {
  const { pending, state, fieldError, run } = useAdminAction();
  const going = moves.filter((move) => move.state !== "done" && move.state !== "cancelled");

  return (
    <section className="card" aria-label="Moves">
      <h2>Moves</h2>
      <RefreshWhile active={going.length > 0} />
      {state?.error && !fieldError("to") && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      {node.accounts === 0 ? (
        <p className="muted">{node.name} hosts no account.</p>
      ) : (
        <NodeChoiceForm
          id="drain-target"
          label="Drain to"
          hint={`${node.name} takes no new accounts, and its ${node.accounts} account(s) move there one after another, each site paused only for its last changes.`}
          error={fieldError("to")}
          nodes={targets}
          submit={`Drain ${node.name}`}
          pending={pending}
          onChoose={(target) => run(() => drainNodeAction(node.id, target))}
        />
      )}
      {moves.length > 0 && (
        <div className="table-scroll">
          <table className="data">
            <caption className="muted">
              {going.length ? `${going.length} of ${moves.length} moving or waiting` : "Moves of the last day"}
            </caption>
            <thead>
              <tr>
                <th>Account</th>
                <th>To</th>
                <th>Step</th>
                <th>Last error</th>
                <th>Ended</th>
              </tr>
            </thead>
            <tbody>
              {moves.map((move) => (
                <tr key={move.id}>
                  <td>{move.account}</td>
                  <td>{move.target}</td>
                  <td>{move.step}</td>
                  <td>{move.error ?? "—"}</td>
                  <td>
                    <Time at={move.finished_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
