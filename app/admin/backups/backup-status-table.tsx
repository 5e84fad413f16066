"use client";

import Link from "next/link";
import { useState } from "react";
import { useAdminAction } from "@/components/form";
import type { AccountBackupStatus } from "@/lib/backups/schemas";
import { backupNowAction } from "./actions";
import { Failure } from "@/components/status";
import { Time } from "@/components/time";
import { sizeText } from "./format";

/** Every account's backup status (last success, last failure and its error, restore points, size), with "Back up now" per row. */
export function BackupStatusTable({ accounts }: { accounts: AccountBackupStatus[] }) {
  const { pending, state, run } = useAdminAction();
  const [message, setMessage] = useState<string | null>(null);

  return (
    <section className="card" aria-labelledby="backup-status-heading">
      <h2 id="backup-status-heading">Accounts</h2>
      {message && <p role="status">{message} Reload the page to see its outcome.</p>}
      {state?.error && (
        <p className="alert" role="alert">
          {state.error}
        </p>
      )}
      <div className="table-scroll">
        <table className="data" aria-label="Backup status">
          <thead>
            <tr>
              <th>Account</th>
              <th>Last success</th>
              <th>Last failure</th>
              <th>Restore points</th>
              <th>Size</th>
              <th aria-label="Actions" />
            </tr>
          </thead>
          <tbody>
            {accounts.length === 0 && (
              <tr>
                <td colSpan={6} className="muted">
                  No hosting accounts.
                </td>
              </tr>
            )}
            {accounts.map((account) => (
              <tr key={account.account_id}>
                <td>
                  <Link href={`/admin/accounts/${account.account_id}`}>{account.username}</Link>
                </td>
                <td>
                  <Time at={account.last_success_at} empty="never" />
                </td>
                <td>
                  <Time at={account.last_failure_at} />
                  {account.last_error && (
                    <div>
                      <Failure reason={account.last_error} />
                    </div>
                  )}
                </td>
                <td>{account.snapshots}</td>
                <td>{sizeText(account.size_bytes)}</td>
                <td>
                  <button
                    type="button"
                    disabled={pending}
                    aria-label={`Back up ${account.username} now`}
                    onClick={() => {
                      setMessage(null);
                      run(() => backupNowAction(account.account_id), (started) => setMessage(started ?? null));
                    }}
                  >
                    Back up now
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
