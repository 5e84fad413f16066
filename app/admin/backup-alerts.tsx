import Link from "next/link";
import { Badge, Failure } from "@/components/status";
import { Time } from "@/components/time";
import type { AccountBackupStatus } from "@/lib/backups/schemas";

/** A night is missed when the last success is older than this (a day and a half: one run a day). */
const MISSED_AFTER_MS = 36 * 3600_000;

/** The dashboard's backup card: every account whose last run failed or whose last good backup is too old, by name. */
export function BackupAlerts({ accounts, scheduled }: { accounts: AccountBackupStatus[]; scheduled: boolean }) {
  const now = Date.now();
  const failed = accounts.filter((account) => account.last_error !== null);
  const missed = accounts.filter(
    (account) => account.last_error === null && (!account.last_success_at || now - Date.parse(account.last_success_at) > MISSED_AFTER_MS),
  );
  return (
    <section className="card" aria-labelledby="backups-heading" style={{ marginTop: "1.5rem" }}>
      <h2 id="backups-heading">Backups</h2>
      {!scheduled && <p className="alert">Nightly backups are off: set BACKUP_SCHEDULE to a time of day (e.g. 02:00) in the panel&apos;s configuration to turn them on.</p>}
      {accounts.length === 0 ? (
        <p>
          <Badge tone="neutral">No accounts yet</Badge> Each account is backed up from the first night after it is created.
        </p>
      ) : failed.length === 0 && missed.length === 0 ? (
        <p>
          <Badge tone="ok">{accounts.length === 1 ? "1 account backed up" : `All ${accounts.length} accounts backed up`}</Badge> within the last
          night.
        </p>
      ) : (
        <ul>
          {failed.map((account) => (
            <li key={account.account_id}>
              <Link href={`/admin/accounts/${account.account_id}/edit`}>{account.username}</Link> <Failure reason={account.last_error} />
            </li>
          ))}
          {missed.map((account) => (
            <li key={account.account_id}>
              <Link href={`/admin/accounts/${account.account_id}/edit`}>{account.username}</Link> <Badge tone="trouble">No recent backup</Badge> last{" "}
              <Time at={account.last_success_at} empty="never" />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
