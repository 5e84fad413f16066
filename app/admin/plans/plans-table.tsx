"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { DataTable } from "@/components/data-table";
import type { PlanListRow } from "@/lib/plans/schemas";

const limit = (value: number | null, unit = "") => (value === null ? <span className="muted">Unlimited</span> : `${value.toLocaleString("en-US")}${unit}`);

const columns: ColumnDef<PlanListRow, unknown>[] = [
  { header: "Name", cell: ({ row }) => <strong>{row.original.name}</strong> },
  { header: "Domains", cell: ({ row }) => limit(row.original.max_domains) },
  { header: "Databases", cell: ({ row }) => limit(row.original.max_databases) },
  { header: "DB users", cell: ({ row }) => limit(row.original.max_database_users) },
  { header: "DNS records", cell: ({ row }) => limit(row.original.max_dns_records) },
  { header: "Disk", cell: ({ row }) => limit(row.original.disk_mb, " MB") },
  { header: "Accounts", cell: ({ row }) => row.original.account_count },
  {
    header: "Actions",
    cell: ({ row }) => (
      <Link className="button" href={`/admin/plans/${row.original.id}/edit`} aria-label={`Edit ${row.original.name}`}>
        Edit
      </Link>
    ),
  },
];

export function PlansTable(props: { rows: PlanListRow[]; total: number; page: number; perPage: number; search: string }) {
  const empty = props.search ? (
    <p>No plan matches “{props.search}”.</p>
  ) : (
    <>
      <h2>No plans yet</h2>
      <Link className="button primary" href="/admin/plans/create">
        Create a plan
      </Link>
    </>
  );
  return <DataTable columns={columns} searchLabel="Search plans by name" empty={empty} {...props} />;
}
