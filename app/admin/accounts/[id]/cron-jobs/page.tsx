import type { Metadata } from "next";
import Link from "next/link";
import { listCronJobs } from "@/lib/cron/service";
import { listQueryFromUrl, pageOfList } from "@/lib/list-query";
import { AccountHeader } from "../account-header";
import { accountOfPage, type AccountPageProps } from "../account-page";
import { accountPaths } from "../paths";
import { CronJobsTable } from "./cron-jobs-table";

export const metadata: Metadata = { title: "Cron jobs" };

export default async function AccountCronJobsPage({ params, searchParams }: AccountPageProps) {
  const { db, account } = await accountOfPage(params);
  const query = listQueryFromUrl(await searchParams);
  const jobs = await listCronJobs(db, account.id);
  const { rows, total } = pageOfList(jobs, query, (job) => `${job.schedule} ${job.command}`);
  const limit = account.plan.max_cron_jobs;
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "Cron jobs" }]}
        title={`Cron jobs of “${account.username}”`}
        action={
          <Link className="button primary" href={`${accountPaths(account.id).cronJobs}/create`}>
            Add cron job
          </Link>
        }
      />
      <p className="muted">
        Commands the account runs on a schedule, as its own user{limit === null ? "" : ` (its plan allows ${limit})`}.
        {account.is_suspended && " While it is suspended, none runs."}
      </p>
      <CronJobsTable accountId={account.id} rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
