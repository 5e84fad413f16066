"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { ActionButton } from "@/components/action-button";
import { DataTable } from "@/components/data-table";
import { Badge } from "@/components/status";
import { Time } from "@/components/time";
import type { CronJobRecord } from "@/lib/cron/schemas";
import { accountPaths } from "../paths";
import { deleteCronJobAction } from "./actions";

/** The account's cron jobs: schedule, command, whether it runs; edit, delete. */
export function CronJobsTable({ accountId, ...props }: { accountId: number; rows: CronJobRecord[]; total: number; page: number; perPage: number; search: string }) {
  const paths = accountPaths(accountId);
  const columns: ColumnDef<CronJobRecord, unknown>[] = [
    { header: "Schedule", cell: ({ row }) => <code>{row.original.schedule}</code> },
    { header: "Command", cell: ({ row }) => <code className="wrap">{row.original.command}</code> },
    { header: "Runs", cell: ({ row }) => (row.original.is_enabled ? <Badge tone="ok">Enabled</Badge> : <Badge tone="neutral">Disabled</Badge>) },
    { header: "Changed", cell: ({ row }) => <Time at={row.original.updated_at} /> },
    {
      header: "Actions",
      cell: ({ row }) => (
        <span className="actions">
          <Link className="button" href={`${paths.cronJobs}/${row.original.id}/edit`} aria-label={`Edit the cron job ${row.original.command}`}>
            Edit
          </Link>
          <ActionButton
            label="Delete"
            danger
            subject="The cron job"
            ariaLabel={`Delete the cron job ${row.original.command}`}
            confirm={`Delete the cron job "${row.original.command}" (${row.original.schedule})?`}
            action={() => deleteCronJobAction(accountId, row.original.id)}
          />
        </span>
      ),
    },
  ];
  const empty = props.search ? <p>No cron job matches “{props.search}”.</p> : <p>No cron jobs yet.</p>;
  return <DataTable columns={columns} searchLabel="Search cron jobs" empty={empty} {...props} />;
}
