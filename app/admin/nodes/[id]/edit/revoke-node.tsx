"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { TextField, useAdminAction } from "@/components/form";
import { revokeNodeAction } from "../../actions";

/** Revoke behind a confirmation that asks for the node's name; refused while it hosts accounts. */
export function RevokeNode({ node }: { node: { id: number; name: string; accounts: number } }) {
  const router = useRouter();
  const { pending, state, fieldError, run } = useAdminAction();
  const [confirming, setConfirming] = useState(false);
  const [confirmation, setConfirmation] = useState("");
  return (
    <section className="card" aria-label="Revoke">
      <h2>Revoke</h2>
      {state?.error && !fieldError("confirmation") && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      {node.accounts > 0 ? (
        <p className="muted">It hosts {node.accounts} account(s): move them to another node before revoking it.</p>
      ) : confirming ? (
        <form
          className="notice"
          onSubmit={(event) => {
            event.preventDefault();
            run(() => revokeNodeAction(node.id, confirmation), () => router.push("/admin/nodes"));
          }}
        >
          <p>
            Revoking removes <strong>{node.name}</strong>: its agent is disconnected at once and its credentials never connect again. To use the
            machine again, add it as a new node.
          </p>
          <TextField id="revoke-confirmation" label="Type the node's name to confirm" autoComplete="off" value={confirmation} onChange={setConfirmation} error={fieldError("confirmation")} />
          <button type="submit" className="danger" disabled={pending || confirmation.trim() !== node.name}>
            Revoke {node.name}
          </button>{" "}
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <p>
          <button type="button" className="danger" onClick={() => setConfirming(true)}>
            Revoke…
          </button>
        </p>
      )}
    </section>
  );
}
