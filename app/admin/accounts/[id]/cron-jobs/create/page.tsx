import type { Metadata } from "next";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { AccountHeader } from "../../account-header";
import { accountPaths } from "../../paths";
import { CronJobForm } from "../cron-job-form";

export const metadata: Metadata = { title: "Add cron job" };

export default async function CreateCronJobPage({ params }: { params: Promise<{ id: string }> }) {
  const { db } = await requireAdminSession();
  const account = await recordOr404((await params).id, (id) => getAccount(db, id));
  return (
    <>
      <AccountHeader
        account={account}
        trail={[{ label: "Cron jobs", href: accountPaths(account.id).cronJobs }, { label: "Add" }]}
        title={`Add a cron job to “${account.username}”`}
      />
      <CronJobForm accountId={account.id} />
    </>
  );
}
