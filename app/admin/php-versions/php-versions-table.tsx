"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { DataTable } from "@/components/data-table";
import type { PhpVersionListRow } from "@/lib/php/schemas";

const columns: ColumnDef<PhpVersionListRow, unknown>[] = [
  { header: "Version", cell: ({ row }) => <strong>PHP {row.original.version}</strong> },
  {
    header: "On this server",
    cell: ({ row }) => (row.original.installed ? "Installed" : <span className="muted">Not installed</span>),
  },
  { header: "Domains using it", cell: ({ row }) => row.original.domain_count },
  {
    header: "Actions",
    cell: ({ row }) => (
      <Link className="button" href={`/admin/php-versions/${row.original.id}/edit`} aria-label={`Edit PHP ${row.original.version}`}>
        Edit
      </Link>
    ),
  },
];

export function PhpVersionsTable(props: { rows: PhpVersionListRow[]; total: number; page: number; perPage: number; search: string }) {
  const empty = props.search ? (
    <p>No PHP version matches “{props.search}”.</p>
  ) : (
    <>
      <h2>No PHP versions yet</h2>
      <p className="muted">Add the PHP versions installed on this server so that accounts can choose one per domain.</p>
      <Link className="button primary" href="/admin/php-versions/create">
        Add a PHP version
      </Link>
    </>
  );
  return <DataTable columns={columns} searchLabel="Search PHP versions" empty={empty} {...props} />;
}
