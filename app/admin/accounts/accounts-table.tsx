"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { DataTable } from "@/components/data-table";
import { Badge, Failure } from "@/components/status";
import { Ago, Time } from "@/components/time";
import { amount } from "@/components/usage-bar";
import type { AccountListEntry } from "@/lib/accounts/overview";

const columns: ColumnDef<AccountListEntry, unknown>[] = [
  {
    header: "Username",
    cell: ({ row }) => (
      <Link href={`/admin/accounts/${row.original.id}`}>
        <strong>{row.original.username}</strong>
      </Link>
    ),
  },
  { header: "Domain", cell: ({ row }) => row.original.domain },
  { header: "Plan", cell: ({ row }) => row.original.plan.name },
  { header: "Reseller", cell: ({ row }) => row.original.reseller_username ?? <span className="muted">None</span> },
  {
    header: "Disk",
    cell: ({ row }) => {
      const { disk, plan } = row.original;
      const limit = plan.disk_mb === null ? "(no limit)" : `of ${amount(plan.disk_mb, "MB")}`;
      if (!disk) return <span className="muted">— {limit}</span>;
      const over = plan.disk_mb !== null && disk.used_mb > plan.disk_mb;
      return (
        <>
          <span className={over ? "error" : undefined}>
            {amount(disk.used_mb, "MB")} {limit}
          </span>
          <div className="muted">
            <Ago at={disk.measured_at} />
          </div>
        </>
      );
    },
  },
  {
    header: "Last backup",
    cell: ({ row }) =>
      row.original.backup.last_error ? (
        <Failure reason={row.original.backup.last_error} />
      ) : (
        <Time at={row.original.backup.last_success_at} empty="never" />
      ),
  },
  {
    header: "Node",
    cell: ({ row }) => (
      <>
        {row.original.node}
        {row.original.node_sync === "pending" && (
          <div>
            <Failure label="Waiting" reason="for its node" />
          </div>
        )}
        {row.original.node_sync === "failed" && (
          <div>
            <Failure label="Out of step" reason={row.original.node_error ?? undefined} />
          </div>
        )}
      </>
    ),
  },
  {
    header: "Status",
    cell: ({ row }) => (row.original.is_suspended ? <Badge tone="trouble">Suspended</Badge> : <Badge tone="ok">Active</Badge>),
  },
  { header: "Created", cell: ({ row }) => <Time at={row.original.created_at} /> },
  {
    header: "Actions",
    cell: ({ row }) => (
      <Link className="button" href={`/admin/accounts/${row.original.id}`} aria-label={`Open ${row.original.username}`}>
        Open
      </Link>
    ),
  },
];

export function AccountsTable(props: {
  rows: AccountListEntry[];
  total: number;
  page: number;
  perPage: number;
  search: string;
  status: "active" | "suspended" | null;
}) {
  const { status, ...table } = props;
  const empty = props.search ? (
    <p>No {status ?? ""} hosting account matches “{props.search}”.</p>
  ) : status ? (
    <p>No {status} hosting accounts.</p>
  ) : (
    <>
      <h2>No hosting accounts yet</h2>
      <p className="muted">Each account gets its main domain, a DNS zone and the quotas of its plan.</p>
      <Link className="button primary" href="/admin/accounts/create">
        Create your first account
      </Link>
    </>
  );
  return <DataTable columns={columns} searchLabel="Search by username, domain or email" empty={empty} {...table} />;
}
