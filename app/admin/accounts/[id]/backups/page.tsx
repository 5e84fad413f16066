import type { Metadata } from "next";
import { BackupTarget } from "@/app/admin/backups/backup-target";
import { ADMIN } from "@/lib/accounts/manager";
import { backupStatus, listRuns } from "@/lib/backups/service";
import { AccountHeader } from "../account-header";
import { accountOfPage, type AccountPageProps } from "../account-page";
import { Backups } from "./backups";

export const metadata: Metadata = { title: "Backups" };

export default async function AccountBackupsPage({ params }: AccountPageProps) {
  const { db, account } = await accountOfPage(params);
  const status = await backupStatus(db, ADMIN, account.id);
  // restic answers for the restore points: a repository it cannot read is said in the panel, the page still shows.
  const restorePoints = await listRuns(db, account.id).then(
    (runs) => ({ runs, error: null }),
    (error: Error) => ({ runs: [], error: error.message }),
  );
  return (
    <>
      <AccountHeader db={db} account={account} trail={[{ label: "Backups" }]} title={`Backups of “${account.username}”`} />
      <BackupTarget />
      <Backups
        account={{ id: account.id, username: account.username }}
        status={status.accounts[0] ?? null}
        runs={restorePoints.runs}
        runsError={restorePoints.error}
      />
    </>
  );
}
