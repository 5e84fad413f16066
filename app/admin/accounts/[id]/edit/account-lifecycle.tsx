"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { UsernameConfirmationField, useAdminAction } from "@/components/form";
import { suspendAccountAction, terminateAccountAction, unsuspendAccountAction } from "../../actions";

/** Suspend / Unsuspend, and Terminate behind a confirmation that asks for the username. */
export function AccountLifecycle({ account }: { account: { id: number; username: string; suspended: boolean } }) {
  const router = useRouter();
  const { pending, state, fieldError, run } = useAdminAction();
  const [reason, setReason] = useState("");
  const [confirming, setConfirming] = useState(false);
  const [confirmation, setConfirmation] = useState("");

  return (
    <section className="card" aria-label="Suspension and termination">
      <h2>Suspension and termination</h2>
      {state?.error && !fieldError("confirmation") && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      {account.suspended ? (
        <p>
          <button type="button" disabled={pending} onClick={() => run(() => unsuspendAccountAction(account.id))}>
            Unsuspend
          </button>{" "}
          <span className="muted">Its API keys work again and its database users can log in.</span>
        </p>
      ) : (
        <div className="field">
          <label htmlFor="suspension-reason">Reason for suspension (optional)</label>
          <input id="suspension-reason" type="text" value={reason} maxLength={255} onChange={(event) => setReason(event.target.value)} />
          <p>
            <button
              type="button"
              disabled={pending}
              onClick={() => run(() => suspendAccountAction(account.id, reason))}
            >
              Suspend
            </button>{" "}
            <span className="muted">Its own API keys are refused and its database users locked, until unsuspended.</span>
          </p>
        </div>
      )}
      {confirming ? (
        <form
          className="notice"
          onSubmit={(event) => {
            event.preventDefault();
            run(() => terminateAccountAction(account.id, confirmation), () => router.push("/admin/accounts"));
          }}
        >
          <p>
            Terminating removes everything of <strong>{account.username}</strong> — its databases and their users on the
            database server, its zone files, domains, DNS records and API keys. It cannot be undone.
          </p>
          <UsernameConfirmationField id="terminate-confirmation" value={confirmation} onChange={setConfirmation} error={fieldError("confirmation")} />
          <button type="submit" className="danger" disabled={pending || confirmation.trim() !== account.username}>
            Terminate {account.username}
          </button>{" "}
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <p>
          <button type="button" className="danger" onClick={() => setConfirming(true)}>
            Terminate…
          </button>
        </p>
      )}
    </section>
  );
}
