"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { DataTable } from "@/components/data-table";
import { Time } from "@/components/time";
import type { ResellerListRow } from "@/lib/resellers/schemas";

const columns: ColumnDef<ResellerListRow, unknown>[] = [
  { header: "Username", cell: ({ row }) => <strong>{row.original.username}</strong> },
  { header: "Accounts", cell: ({ row }) => row.original.account_count },
  { header: "Created", cell: ({ row }) => <Time at={row.original.created_at} /> },
  {
    header: "Actions",
    cell: ({ row }) => (
      <Link className="button" href={`/admin/resellers/${row.original.id}/edit`} aria-label={`Edit ${row.original.username}`}>
        Edit
      </Link>
    ),
  },
];

export function ResellersTable(props: { rows: ResellerListRow[]; total: number; page: number; perPage: number; search: string }) {
  const empty = props.search ? (
    <p>No reseller matches “{props.search}”.</p>
  ) : (
    <>
      <h2>No resellers yet</h2>
      <p className="muted">A reseller owns hosting accounts and manages them with its own API key.</p>
      <Link className="button primary" href="/admin/resellers/create">
        Create a reseller
      </Link>
    </>
  );
  return <DataTable columns={columns} searchLabel="Search resellers by username" empty={empty} {...props} />;
}
