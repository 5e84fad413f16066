"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { DataTable } from "@/components/data-table";
import type { AccountListRow } from "@/lib/accounts/schemas";

const columns: ColumnDef<AccountListRow, unknown>[] = [
  { header: "Username", cell: ({ row }) => <strong>{row.original.username}</strong> },
  { header: "Domain", cell: ({ row }) => row.original.domain },
  { header: "Plan", cell: ({ row }) => row.original.plan.name },
  { header: "Reseller", cell: ({ row }) => row.original.reseller_username ?? <span className="muted">None</span> },
  { header: "SSH", cell: ({ row }) => (row.original.has_ssh_access ? "Yes" : <span className="muted">No</span>) },
  {
    header: "Status",
    cell: ({ row }) =>
      row.original.is_suspended ? <span className="badge off">Suspended</span> : <span className="badge on">Active</span>,
  },
  { header: "Created", cell: ({ row }) => row.original.created_at.slice(0, 10) },
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
