"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { ActionButton } from "@/components/action-button";
import { DataTable } from "@/components/data-table";
import { Time } from "@/components/time";
import type { DatabaseRecord } from "@/lib/databases/service";
import { accountPaths } from "../paths";
import { deleteDatabaseAction } from "./actions";

const sizeText = (sizeMb: number | null) => (sizeMb === null ? <span className="muted">unknown</span> : `${sizeMb.toLocaleString("en-US", { maximumFractionDigits: 2 })} MB`);

/** The account's databases: size, the users reaching each and their privileges; delete. */
export function DatabasesTable({ accountId, ...props }: { accountId: number; rows: DatabaseRecord[]; total: number; page: number; perPage: number; search: string }) {
  const paths = accountPaths(accountId);
  const columns: ColumnDef<DatabaseRecord, unknown>[] = [
    { header: "Database", cell: ({ row }) => <strong>{row.original.database_name}</strong> },
    { header: "Size", cell: ({ row }) => sizeText(row.original.size_mb) },
    {
      header: "Users",
      cell: ({ row }) =>
        row.original.users.length === 0 ? (
          <span className="muted">none</span>
        ) : (
          <ul className="plain">
            {row.original.users.map((user) => (
              <li key={user.id}>
                <Link href={`${paths.databaseUsers}/${user.id}/edit`}>{user.username}</Link> <span className="muted">{user.privileges.join(", ")}</span>
              </li>
            ))}
          </ul>
        ),
    },
    { header: "Created", cell: ({ row }) => <Time at={row.original.created_at} /> },
    {
      header: "Actions",
      cell: ({ row }) => (
        <ActionButton
          label="Delete"
          danger
          subject={row.original.database_name}
          ariaLabel={`Delete ${row.original.database_name}`}
          confirm={`Delete the database ${row.original.database_name}?\n\nIts tables and data are deleted from the database server. This cannot be undone.`}
          action={() => deleteDatabaseAction(accountId, row.original.id)}
        />
      ),
    },
  ];
  const empty = props.search ? <p>No database matches “{props.search}”.</p> : <p>No databases yet.</p>;
  return <DataTable columns={columns} searchLabel="Search databases" empty={empty} {...props} />;
}
