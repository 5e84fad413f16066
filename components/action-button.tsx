"use client";

import type { FormState } from "@/lib/admin-session/form-state";
import { useAdminAction } from "./form";
import { useHydrated } from "./use-hydrated";

/** What the page says once a row's action went through, by its button's label. */
const DONE: Record<string, string> = { Delete: "deleted", Detach: "detached", Remove: "removed", Revoke: "revoked" };

/**
 * A row's button that runs a server action (Delete, Detach…), once the admin has confirmed
 * `confirm` when given. A refusal is shown under the button, in the row it concerns: a field's
 * refusal ("is the account's main domain") as a sentence about the row's `subject`. Success is
 * said at the top of the page ("shop.example deleted", or `status`).
 */
export function ActionButton<Saved>({
  label,
  ariaLabel,
  subject,
  confirm,
  action,
  danger = false,
  done,
  status,
}: {
  label: string;
  ariaLabel: string;
  subject: string;
  confirm?: string;
  action: () => Promise<FormState | { saved: Saved }>;
  danger?: boolean;
  /** Called with what the action sent back once it went through. */
  done?: (saved: Saved | undefined) => void;
  /** What the page says once it went through; by default the subject and the label's past ("shop deleted"). */
  status?: string;
}) {
  const { pending, state, run } = useAdminAction();
  const hydrated = useHydrated();
  const fieldMessage = Object.values(state?.fieldErrors ?? {}).flat()[0];
  const refusal = fieldMessage ? (/^[a-z]/.test(fieldMessage) ? `${subject} ${fieldMessage}` : fieldMessage) : state?.error;
  return (
    <span className="row-action">
      <button
        type="button"
        className={danger ? "danger" : undefined}
        disabled={pending || !hydrated}
        aria-label={ariaLabel}
        onClick={() => {
          if (!confirm || window.confirm(confirm)) run(action, done, status ?? `${subject} ${DONE[label] ?? `: ${label.toLowerCase()} done`}`);
        }}
      >
        {label}
      </button>
      {refusal && (
        <span className="error" role="alert">
          {refusal}
        </span>
      )}
    </span>
  );
}
