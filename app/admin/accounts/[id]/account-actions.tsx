"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useRef, useState } from "react";
import { createPortal } from "react-dom";
import { ConfirmByNameForm, TextField, useAdminAction } from "@/components/form";
import { announce } from "@/components/status-message";
import { Time } from "@/components/time";
import { suspendAccountAction, terminateAccountAction, unsuspendAccountAction } from "../actions";
import { ACCOUNT_STEP } from "./paths";

type Lifecycle = { id: number; username: string; suspended: boolean; node: string };

/**
 * What the page says after a suspension or an unsuspension: that it is done, or (`later`) that it
 * waits for the account's node, which did not answer: the change is recorded and applied when it is back.
 */
const answer = (done: string) => (later: string | null | undefined) => {
  announce(later ?? done, { tone: later ? "waiting" : "ok" });
};

/** Unsuspend, from the banner or the menu. */
function useUnsuspend(account: Lifecycle) {
  const { pending, state, run } = useAdminAction();
  const unsuspend = () => run(() => unsuspendAccountAction(account.id), answer(`${account.username} is unsuspended: its sites, API keys and database users work again.`));
  return { pending, error: state?.error, unsuspend };
}

/** The banner of a suspended account: since when, why, and Unsuspend. */
export function SuspendedBanner({ account, since, reason }: { account: Lifecycle; since: string | null; reason: string | null }) {
  const { pending, error, unsuspend } = useUnsuspend(account);
  return (
    <div className="notice status-banner" role="region" aria-label="Account status">
      <p>
        <strong>Suspended</strong>
        {since && (
          <>
            {" "}
            since <Time at={since} />
          </>
        )}
        {reason && <> — {reason}</>}
      </p>
      <button type="button" disabled={pending} onClick={unsuspend}>
        Unsuspend
      </button>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * The account's Actions menu (Suspend or Unsuspend, Move, Terminate) and the step each opens
 * below it: Suspend asks for a reason, Terminate for the username typed again. `moveHref`: where
 * the move is chosen (the Settings tab), or null when no other node takes accounts.
 */
export function AccountActions({ account, moveHref }: { account: Lifecycle; moveHref: string | null }) {
  const router = useRouter();
  const menu = useRef<HTMLDivElement>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const { pending, state, fieldError, run } = useAdminAction();
  const unsuspend = useUnsuspend(account);
  const [step, setStep] = useState<"suspend" | "terminate" | null>(null);
  const [reason, setReason] = useState("");
  const open = (next: typeof step) => {
    setMenuOpen(false);
    setStep(next);
  };

  return (
    <>
      <div
        className="actions-menu"
        ref={menu}
        onKeyDown={(event) => {
          if (event.key === "Escape") setMenuOpen(false);
        }}
        onBlur={(event) => {
          if (!menu.current?.contains(event.relatedTarget as Node | null)) setMenuOpen(false);
        }}
      >
        <button type="button" aria-expanded={menuOpen} aria-controls="account-actions" onClick={() => setMenuOpen(!menuOpen)}>
          Actions
        </button>
        {menuOpen && (
          <div className="menu-items" id="account-actions">
            {account.suspended ? (
              <button type="button" disabled={unsuspend.pending} onClick={() => (open(null), unsuspend.unsuspend())}>
                Unsuspend
              </button>
            ) : (
              <button type="button" onClick={() => open("suspend")}>
                Suspend…
              </button>
            )}
            {moveHref ? (
              <Link href={moveHref} onClick={() => open(null)}>
                Move to another node…
              </Link>
            ) : (
              <Link href="/admin/nodes/create" onClick={() => open(null)}>
                Move: add a node →
              </Link>
            )}
            <button type="button" className="danger" onClick={() => open("terminate")}>
              Terminate…
            </button>
          </div>
        )}
      </div>
      {(step || unsuspend.error) &&
        createPortal(
        <div className="card">
          {(state?.error ?? unsuspend.error) && !fieldError("confirmation") && !fieldError("reason") && (
            <p className="alert" role="alert">
              {state?.error ?? unsuspend.error}
            </p>
          )}
          {step === "suspend" && (
            <form
              aria-label="Suspend the account"
              onSubmit={(event) => {
                event.preventDefault();
                run(
                  () => suspendAccountAction(account.id, reason),
                  (later) => {
                    answer(`${account.username} is suspended: its sites answer 503, its own API keys are refused and its database users locked.`)(later);
                    setStep(null);
                  },
                );
              }}
            >
              <TextField id="suspension-reason" label="Reason for suspension (optional)" value={reason} onChange={setReason} error={fieldError("reason")} />
              <button type="submit" className="danger" disabled={pending}>
                Suspend {account.username}
              </button>{" "}
              <button type="button" onClick={() => setStep(null)}>
                Cancel
              </button>
            </form>
          )}
          {step === "terminate" && (
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
                    if (!outcome || outcome.gone) {
                      announce(`Account ${account.username} terminated. Its backups stay: it can be restored from the Terminated list.`, { path: "/admin/accounts" });
                      return router.push("/admin/accounts");
                    }
                    setStep(null);
                    announce(outcome.message, { tone: "waiting" });
                  },
                )
              }
              onCancel={() => setStep(null)}
            >
              <p>
                Terminating removes everything of <strong>{account.username}</strong> from its node {account.node} and from the panel: its sites,
                certificates, zone files, databases and their users, cron jobs, its Linux user and home directory with its files and logs, and its
                domains, DNS records and API keys. It cannot be undone (its backups stay).
              </p>
            </ConfirmByNameForm>
          )}
        </div>,
          document.getElementById(ACCOUNT_STEP)!,
        )}
    </>
  );
}
