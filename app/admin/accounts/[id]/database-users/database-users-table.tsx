"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { ActionButton } from "@/components/action-button";
import { DataTable } from "@/components/data-table";
import { Time } from "@/components/time";
import type { DatabaseUserRecord } from "@/lib/databases/service";
import { accountPaths } from "../paths";
import { deleteDatabaseUserAction } from "./actions";

/** The account's database users: the databases each reaches and with which privileges; edit, delete. */
export function DatabaseUsersTable({ accountId, ...props }: { accountId: number; rows: DatabaseUserRecord[]; total: number; page: number; perPage: number; search: string }) {
  const paths = accountPaths(accountId);
  const columns: ColumnDef<DatabaseUserRecord, unknown>[] = [
    { header: "User", cell: ({ row }) => <strong>{row.original.username}</strong> },
    {
      header: "Databases",
      cell: ({ row }) =>
        row.original.databases.length === 0 ? (
          <span className="muted">none</span>
        ) : (
          <ul className="plain">
            {row.original.databases.map((database) => (
              <li key={database.id}>
                {database.database_name} <span className="muted">{database.privileges.join(", ")}</span>
              </li>
            ))}
          </ul>
        ),
    },
    { header: "Created", cell: ({ row }) => <Time at={row.original.created_at} /> },
    {
      header: "Actions",
      cell: ({ row }) => (
        <span className="actions">
          <Link className="button" href={`${paths.databaseUsers}/${row.original.id}/edit`} aria-label={`Edit ${row.original.username}`}>
            Edit
          </Link>
          <ActionButton
            label="Delete"
            danger
            subject={row.original.username}
            ariaLabel={`Delete ${row.original.username}`}
            confirm={`Delete the database user ${row.original.username}?\n\nApplications logging in as this user stop working at once.`}
            action={() => deleteDatabaseUserAction(accountId, row.original.id)}
          />
        </span>
      ),
    },
  ];
  const empty = props.search ? <p>No database user matches “{props.search}”.</p> : <p>No database users yet.</p>;
  return <DataTable columns={columns} searchLabel="Search database users" empty={empty} {...props} />;
}
