"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { DataTable } from "@/components/data-table";
import { Badge } from "@/components/status";
import { Time } from "@/components/time";
import type { AdminRecord } from "@/lib/admins/schemas";

export function AdminsTable(props: { rows: AdminRecord[]; total: number; page: number; perPage: number; search: string; selfId: number }) {
  const columns: ColumnDef<AdminRecord, unknown>[] = [
    {
      header: "Email",
      cell: ({ row }) => (
        <>
          <strong>{row.original.email}</strong>
          {row.original.id === props.selfId && <span className="muted"> (you)</span>}
        </>
      ),
    },
    { header: "Name", accessorKey: "name" },
    {
      header: "Status",
      cell: ({ row }) =>
        row.original.is_enabled ? <Badge tone="ok">Enabled</Badge> : <Badge tone="trouble">Disabled</Badge>,
    },
    {
      header: "Two-factor sign-in",
      cell: ({ row }) => (row.original.two_factor ? <Badge tone="ok">On</Badge> : <Badge tone="neutral">Off</Badge>),
    },
    { header: "Created", cell: ({ row }) => <Time at={row.original.created_at} /> },
    {
      header: "Actions",
      cell: ({ row }) => (
        <Link className="button" href={`/admin/settings/admins/${row.original.id}/edit`} aria-label={`Edit ${row.original.email}`}>
          Edit
        </Link>
      ),
    },
  ];
  const empty = <p>No admin matches “{props.search}”.</p>;
  const { selfId: _, ...table } = props;
  return <DataTable columns={columns} searchLabel="Search admins by email or name" empty={empty} {...table} />;
}
