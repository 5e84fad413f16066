"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { useState } from "react";
import { RestorePointsTable } from "@/app/admin/backups/restore-points-table";
import { RestoreAccountForm } from "@/app/admin/backups/restore-terminated-account";
import { DataTable } from "@/components/data-table";
import { Failure } from "@/components/status";
import { Time } from "@/components/time";
import type { TerminatedAccount } from "@/lib/accounts/terminated";
import type { BackupRun } from "@/lib/backups/service";

type Row = TerminatedAccount & { runs: BackupRun[]; runsError: string | null };

/**
 * Terminated accounts: when, on which node, their restore points (newest first) and Restore…,
 * which picks one of them and asks for the username again before the account is made again.
 */
export function TerminatedAccountsTable(props: { rows: Row[]; total: number; page: number; perPage: number; search: string }) {
  const [chosen, setChosen] = useState<Row | null>(null);
  const [restorePoint, setRestorePoint] = useState<BackupRun | null>(null);
  const [restored, setRestored] = useState<{ id: number; username: string; message: string } | null>(null);

  const columns: ColumnDef<Row, unknown>[] = [
    { header: "Username", cell: ({ row }) => <strong>{row.original.username}</strong> },
    { header: "Terminated", cell: ({ row }) => <Time at={row.original.terminated_at} /> },
    { header: "Node", cell: ({ row }) => row.original.node },
    {
      header: "Restore points",
      cell: ({ row }) =>
        row.original.runsError ? (
          <Failure label="Unreadable" reason={row.original.runsError} />
        ) : row.original.runs.length === 0 ? (
          <span className="muted">none</span>
        ) : (
          <>
            {row.original.runs.length === 1 ? "1 restore point" : `${row.original.runs.length} restore points`}
            <div className="muted">
              newest <Time at={row.original.runs[0].time} />
            </div>
          </>
        ),
    },
    {
      header: "Actions",
      cell: ({ row }) =>
        row.original.runs.length > 0 && (
          <button
            type="button"
            aria-label={`Restore ${row.original.username}`}
            onClick={() => {
              setRestored(null);
              setRestorePoint(null);
              setChosen(row.original);
            }}
          >
            Restore…
          </button>
        ),
    },
  ];

  const empty = props.search ? <p>No terminated account matches “{props.search}”.</p> : <p>No account has been terminated.</p>;
  return (
    <>
      {restored && (
        <p className="success" role="status">
          {restored.message} <Link href={`/admin/accounts/${restored.id}`}>Open the account {restored.username}</Link>
        </p>
      )}
      <DataTable columns={columns} searchLabel="Search by username" empty={empty} {...props} />
      {chosen && (
        <section className="card" aria-label={`Restore ${chosen.username}`} style={{ marginTop: "1.5rem" }}>
          <h2>Restore {chosen.username}</h2>
          <RestorePointsTable label={`Restore points of ${chosen.username}`} restorePoints={chosen.runs} action="Restore account" onPick={setRestorePoint} />
          {restorePoint && (
            <RestoreAccountForm
              key={restorePoint.id}
              username={chosen.username}
              node={chosen.node}
              restorePoint={restorePoint}
              onDone={(account) => {
                setChosen(null);
                setRestorePoint(null);
                setRestored(account);
              }}
              onCancel={() => setRestorePoint(null)}
            />
          )}
          <p>
            <button type="button" onClick={() => setChosen(null)}>
              Close
            </button>
          </p>
        </section>
      )}
    </>
  );
}
