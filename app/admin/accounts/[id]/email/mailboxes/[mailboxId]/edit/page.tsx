import type { Metadata } from "next";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { getMailbox } from "@/lib/email/service";
import { AccountHeader } from "../../../../account-header";
import { accountPaths } from "../../../../paths";
import { EditMailboxForm } from "../../../mail-forms";

export const metadata: Metadata = { title: "Edit mailbox" };

// A mailbox's password, quota and enabled; the address is the mailbox's for good. The password is never shown.
export default async function EditMailboxPage({ params }: { params: Promise<{ id: string; mailboxId: string }> }) {
  const { db } = await requireAdminSession();
  const { id, mailboxId } = await params;
  const account = await recordOr404(id, (accountId) => getAccount(db, accountId));
  const mailbox = await recordOr404(mailboxId, (boxId) => getMailbox(db, account.id, boxId));
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "Email", href: accountPaths(account.id).email }, { label: mailbox.address }]}
        title={`Edit the mailbox ${mailbox.address}`}
      />
      <EditMailboxForm accountId={account.id} mailbox={{ id: mailbox.id, address: mailbox.address, quota_mb: mailbox.quota_mb, enabled: mailbox.enabled }} />
    </>
  );
}
