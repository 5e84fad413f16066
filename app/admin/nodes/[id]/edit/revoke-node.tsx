"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { ConfirmByNameForm, useAdminAction } from "@/components/form";
import { revokeNodeAction } from "../../actions";

/** Revoke behind a confirmation that asks for the node's name; refused while it hosts accounts. */
export function RevokeNode({ node }: { node: { id: number; name: string; accounts: number } }) {
  const router = useRouter();
  const { pending, state, fieldError, run } = useAdminAction();
  const [confirming, setConfirming] = useState(false);
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
        <ConfirmByNameForm
          id="revoke-confirmation"
          name={node.name}
          what="node's name"
          verb="Revoke"
          pending={pending}
          error={fieldError("confirmation")}
          onConfirm={(confirmation) => run(() => revokeNodeAction(node.id, confirmation), () => router.push("/admin/nodes"))}
          onCancel={() => setConfirming(false)}
        >
          <p>
            Revoking removes <strong>{node.name}</strong>: its agent is disconnected at once and its credentials never connect again. To use the
            machine again, add it as a new node.
          </p>
        </ConfirmByNameForm>
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
