import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { listCronJobs } from "@/lib/cron/service";
import { AccountHeader } from "../../../account-header";
import { accountPaths } from "../../../paths";
import { CronJobForm } from "../../cron-job-form";

export const metadata: Metadata = { title: "Edit cron job" };

export default async function EditCronJobPage({ params }: { params: Promise<{ id: string; jobId: string }> }) {
  const { db } = await requireAdminSession();
  const { id, jobId } = await params;
  const account = await recordOr404(id, (accountId) => getAccount(db, accountId));
  const job = (await listCronJobs(db, account.id)).find((candidate) => String(candidate.id) === jobId) ?? notFound();
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "Cron jobs", href: accountPaths(account.id).cronJobs }, { label: job.schedule }]}
        title={`Edit the cron job “${job.command}”`}
      />
      <CronJobForm accountId={account.id} jobId={job.id} initial={{ schedule: job.schedule, command: job.command, is_enabled: job.is_enabled }} />
    </>
  );
}
