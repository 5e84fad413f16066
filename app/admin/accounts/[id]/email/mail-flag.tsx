"use client";

import { ActionButton } from "@/components/action-button";
import { Time } from "@/components/time";
import { unflagMailAction } from "./actions";

/**
 * Shown while the account is flagged for its sending limits (docs/email.md "Sending limits"): when a
 * message was first refused, and "Lift flag" once the admin has looked. The flag stops no mail.
 */
export function MailFlag({ accountId, username, flaggedAt }: { accountId: number; username: string; flaggedAt: string }) {
  return (
    <div className="notice" role="note" data-testid="mail-flagged">
      <strong>Flagged:</strong> a message of {username} was refused for the plan&apos;s sending limits at <Time at={flaggedAt} />. Look at what
      sends its mail (a contact form, a mailing list sent from a mailbox) before you lift the flag; the flag itself stops no mail, the limits
      do.{" "}
      <ActionButton
        label="Lift flag"
        ariaLabel={`Lift the mail flag of ${username}`}
        subject={`The mail flag of ${username}`}
        status={`The mail flag of ${username} is lifted`}
        action={() => unflagMailAction(accountId)}
      />
    </div>
  );
}
