import type { Metadata } from "next";
import { AccountHeader } from "../../account-header";
import { accountOfPage, type AccountPageProps } from "../../account-page";
import { accountPaths } from "../../paths";
import { CronJobForm } from "../cron-job-form";

export const metadata: Metadata = { title: "Add cron job" };

export default async function CreateCronJobPage({ params }: Pick<AccountPageProps, "params">) {
  const { db, account } = await accountOfPage(params);
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "Cron jobs", href: accountPaths(account.id).cronJobs }, { label: "Add" }]}
        title={`Add a cron job to “${account.username}”`}
      />
      <CronJobForm accountId={account.id} />
    </>
  );
}
