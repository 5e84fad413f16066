"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { useTransition } from "react";
import { DataTable } from "@/components/data-table";
import { Time } from "@/components/time";
import type { ApiKeyRecord } from "@/lib/api-keys/schemas";
import { deleteKeyAction } from "./actions";

function DeleteButton({ apiKey }: { apiKey: ApiKeyRecord }) {
  const [pending, startTransition] = useTransition();
  return (
    <button
      type="button"
      className="danger"
      disabled={pending}
      aria-label={`Delete ${apiKey.name}`}
      onClick={() => {
        const warning = `Delete the API key "${apiKey.name}"?\n\nEvery integration using it stops working at once. This cannot be undone.`;
        if (window.confirm(warning)) startTransition(() => deleteKeyAction(apiKey.id));
      }}
    >
      Delete
    </button>
  );
}

const scopeLabel = (key: ApiKeyRecord) =>
  key.scope === "admin" ? `Admin${key.owner_email ? ` (${key.owner_email})` : ""}` : key.scope === "reseller" ? `Reseller ${key.reseller_username}` : `Account ${key.account_username}`;

const columns: ColumnDef<ApiKeyRecord, unknown>[] = [
  { header: "Name", accessorKey: "name" },
  { header: "API Key", cell: ({ row }) => <code>{row.original.key}</code> },
  { header: "API Secret", cell: ({ row }) => <code aria-label="masked secret">{row.original.secret_masked}</code> },
  { header: "Scope", cell: ({ row }) => scopeLabel(row.original) },
  {
    header: "Enabled",
    cell: ({ row }) =>
      row.original.is_enabled ? <span className="badge on">Enabled</span> : <span className="badge off">Disabled</span>,
  },
  {
    header: "Last used",
    cell: ({ row }) => <Time at={row.original.last_used_at} empty="Never" />,
  },
  {
    header: "Actions",
    cell: ({ row }) => (
      <span className="actions">
        <Link className="button" href={`/admin/settings/api-keys/${row.original.id}/edit`} aria-label={`Edit ${row.original.name}`}>
          Edit
        </Link>
        <DeleteButton apiKey={row.original} />
      </span>
    ),
  },
];

export function ApiKeysTable(props: { rows: ApiKeyRecord[]; total: number; page: number; perPage: number; search: string }) {
  const empty = props.search ? (
    <p>No API key matches “{props.search}”.</p>
  ) : (
    <>
      <h2>No API keys yet</h2>
      <p className="muted">Create a key for each integration that should use the REST API.</p>
      <Link className="button primary" href="/admin/settings/api-keys/create">
        Create your first API key
      </Link>
    </>
  );
  return <DataTable columns={columns} searchLabel="Search by name, key or secret" empty={empty} {...props} />;
}
