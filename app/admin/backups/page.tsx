import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { PageHeader } from "@/components/page-header";
import { ADMIN } from "@/lib/accounts/manager";
import { requireAdminSession } from "@/lib/admin-session/session";
import { backupStatus } from "@/lib/backups/service";
import { env } from "@/lib/env";
import { listNodes } from "@/lib/nodes/service";
import { BackupStatusTable } from "./backup-status-table";
import { BackupTarget } from "./backup-target";
import { RestoreTerminatedAccount } from "./restore-terminated-account";

export const metadata: Metadata = { title: "Backups" };

/** /admin/backups: every account's backup status with "Back up now", and the restore of a terminated account. */
export default async function BackupsPage() {
  const { db } = await requireAdminSession();
  const { accounts } = await backupStatus(db, ADMIN);
  const schedule = env().backup.schedule;
  const nodeNames = (await listNodes(db)).nodes.map((node) => node.name);
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Backups" }]} />
      <PageHeader title="Backups" />
      <p className="muted">
        {schedule ? `Every account is backed up each night at ${schedule} (server time) by restic.` : "Nightly backups are off: set BACKUP_SCHEDULE to a time of day (e.g. 02:00) in the panel's configuration to turn them on."} An
        account&apos;s restore points and their restore are on its page.
      </p>
      <BackupTarget />
      <BackupStatusTable accounts={accounts} />
      <RestoreTerminatedAccount nodes={nodeNames} />
    </>
  );
}
