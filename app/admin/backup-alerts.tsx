import type { AccountBackupStatus } from "@/lib/backups/schemas";
import { shortTime } from "./backups/format";

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
      {!scheduled && <p className="alert">Nightly backups are off (BACKUP_SCHEDULE=off).</p>}
      {failed.length === 0 && missed.length === 0 ? (
        <p>
          <span className="badge on">All {accounts.length} accounts backed up</span> within the last night.
        </p>
      ) : (
        <ul>
          {failed.map((account) => (
            <li key={account.account_id}>
              <span className="badge off">Failed</span> {account.username}: {account.last_error}
            </li>
          ))}
          {missed.map((account) => (
            <li key={account.account_id}>
              <span className="badge">No recent backup</span> {account.username}
              {account.last_success_at ? ` (last ${shortTime(account.last_success_at)})` : " (never)"}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
