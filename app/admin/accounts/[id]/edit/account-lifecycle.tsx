"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { ConfirmByNameForm, useAdminAction } from "@/components/form";
import { suspendAccountAction, terminateAccountAction, unsuspendAccountAction } from "../../actions";

/**
 * Suspend / Unsuspend, and Terminate behind a confirmation that asks for the username. When the
 * account's node does not answer, the change is recorded and waits for it: the page says so
 * (`waiting`) instead of claiming it is done.
 */
export function AccountLifecycle({ account }: { account: { id: number; username: string; suspended: boolean; node: string } }) {
  const router = useRouter();
  const { pending, state, fieldError, run } = useAdminAction();
  const [reason, setReason] = useState("");
  const [confirming, setConfirming] = useState(false);
  const [waiting, setWaiting] = useState<string | null>(null);

  return (
    <section className="card" aria-label="Suspension and termination">
      <h2>Suspension and termination</h2>
      {state?.error && !fieldError("confirmation") && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      {waiting && (
        <p className="notice" role="status">
          {waiting}
        </p>
      )}
      {account.suspended ? (
        <p>
          <button type="button" disabled={pending} onClick={() => run(() => unsuspendAccountAction(account.id), (later) => setWaiting(later ?? null))}>
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
              onClick={() => run(() => suspendAccountAction(account.id, reason), (later) => setWaiting(later ?? null))}
            >
              Suspend
            </button>{" "}
            <span className="muted">Its own API keys are refused and its database users locked, until unsuspended.</span>
          </p>
        </div>
      )}
      {confirming ? (
        <ConfirmByNameForm
          id="terminate-confirmation"
          name={account.username}
          what="username"
          verb="Terminate"
          pending={pending}
          error={fieldError("confirmation")}
          onConfirm={(confirmation) =>
            run(
              () => terminateAccountAction(account.id, confirmation),
              (outcome) => {
                if (!outcome || outcome.gone) return router.push("/admin/accounts");
                setConfirming(false);
                setWaiting(outcome.message);
              },
            )
          }
          onCancel={() => setConfirming(false)}
        >
          <p>
            Terminating removes everything of <strong>{account.username}</strong> from its node {account.node} and from the panel:
            its sites, certificates, zone files, databases and their users, cron jobs, its Linux user and home directory with its
            files and logs, and its domains, DNS records and API keys. It cannot be undone (its backups stay).
          </p>
        </ConfirmByNameForm>
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
