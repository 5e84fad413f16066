"use client";

import Link from "next/link";
import { type ReactNode, useState } from "react";
import { FieldFrame } from "./form";

/**
 * A choice of the nodes an account may go to and one button (an account's move, a node's drain);
 * when none takes accounts now, says so instead, and where to add one.
 */
export function NodeChoiceForm({
  id,
  label,
  hint,
  error,
  nodes,
  submit,
  pending,
  onChoose,
}: {
  id: string;
  label: string;
  hint: ReactNode;
  error?: string;
  nodes: string[];
  submit: ReactNode;
  pending: boolean;
  onChoose(node: string): void;
}) {
  const [chosen, setChosen] = useState(nodes[0] ?? "");
  if (nodes.length === 0)
    return (
      <p className="muted">
        No other node takes accounts now: a move needs a second server running the panel&apos;s agent.{" "}
        <Link href="/admin/nodes/create">Add a node →</Link>
      </p>
    );
  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        onChoose(chosen);
      }}
    >
      <FieldFrame id={id} label={label} error={error} hint={hint}>
        <select id={id} value={chosen} onChange={(event) => setChosen(event.target.value)}>
          {nodes.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </FieldFrame>
      <button type="submit" disabled={pending}>
        {submit}
      </button>
    </form>
  );
}
