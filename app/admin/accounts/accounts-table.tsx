"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { DataTable } from "@/components/data-table";
import { Badge, Failure } from "@/components/status";
import { Time } from "@/components/time";
import type { AccountListRow } from "@/lib/accounts/schemas";

const columns: ColumnDef<AccountListRow, unknown>[] = [
  { header: "Username", cell: ({ row }) => <strong>{row.original.username}</strong> },
  { header: "Domain", cell: ({ row }) => row.original.domain },
  { header: "Plan", cell: ({ row }) => row.original.plan.name },
  { header: "Reseller", cell: ({ row }) => row.original.reseller_username ?? <span className="muted">None</span> },
  { header: "SSH", cell: ({ row }) => (row.original.has_ssh_access ? "Yes" : <span className="muted">No</span>) },
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
      <Link className="button" href={`/admin/accounts/${row.original.id}/edit`} aria-label={`Edit ${row.original.username}`}>
        Edit
      </Link>
    ),
  },
];

export function AccountsTable(props: { rows: AccountListRow[]; total: number; page: number; perPage: number; search: string }) {
  const empty = props.search ? (
    <p>No hosting account matches “{props.search}”.</p>
  ) : (
    <>
      <h2>No hosting accounts yet</h2>
      <p className="muted">Each account gets its main domain, a DNS zone and the quotas of its plan.</p>
      <Link className="button primary" href="/admin/accounts/create">
        Create your first account
      </Link>
    </>
  );
  return <DataTable columns={columns} searchLabel="Search by username, domain or email" empty={empty} {...props} />;
}
