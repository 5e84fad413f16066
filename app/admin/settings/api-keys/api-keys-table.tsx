"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { useTransition } from "react";
import { DataTable, type PrivateSearch } from "@/components/data-table";
import { Time } from "@/components/time";
import { offeredCount } from "@/lib/api-keys/endpoints";
import type { ApiKeyRecord } from "@/lib/api-keys/schemas";
import { mayHoldSecret } from "@/lib/api-keys/search-terms";
import { listQueryString } from "@/lib/list-query";
import { deleteKeyAction, searchKeysBySecretAction } from "./actions";

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

/** "IP: any address", "IP: 1 address", "IP: 2 ranges". */
function ipLimit(ips: string[]): string {
  if (ips.length === 0) return "IP: any address";
  if (ips.length === 1 && !ips[0].includes("/")) return "IP: 1 address";
  return `IP: ${ips.length} ${ips.length === 1 ? "range" : "ranges"}`;
}

/** "Endpoints: all", or how many of those the key's scope can reach ("Endpoints: 2 of 84"). */
const endpointLimit = (key: ApiKeyRecord) =>
  key.allow_all_endpoints ? "Endpoints: all" : `Endpoints: ${key.allowed_endpoints.length} of ${offeredCount(key.scope)}`;

/** A key's limits at a glance: disabled, addresses, endpoints (the full lists on hover). */
function Limits({ apiKey }: { apiKey: ApiKeyRecord }) {
  return (
    <ul className="plain limits">
      {!apiKey.is_enabled && (
        <li>
          <span className="badge off">Disabled</span>
        </li>
      )}
      <li title={apiKey.allowed_ips.join(", ") || undefined}>{ipLimit(apiKey.allowed_ips)}</li>
      <li title={apiKey.allowed_endpoints.join("\n") || undefined}>{endpointLimit(apiKey)}</li>
    </ul>
  );
}

const privateSearch: PrivateSearch<ApiKeyRecord> = { applies: mayHoldSecret, run: searchKeysBySecretAction };

/** The list's own query, carried to a key's edit page so that Save and Cancel come back to it. */
type ListState = { page: number; perPage: number; search: string };
const listSuffix = ({ page, perPage, search }: ListState) => {
  const query = listQueryString({ page, per_page: perPage, search });
  return query ? `?${query}` : "";
};

const columnsFor = (list: ListState): ColumnDef<ApiKeyRecord, unknown>[] => [
  { header: "Name", accessorKey: "name" },
  { header: "API Key", cell: ({ row }) => <code>{row.original.key}</code> },
  { header: "API Secret", cell: ({ row }) => <code aria-label="masked secret">{row.original.secret_masked}</code> },
  { header: "Scope", cell: ({ row }) => scopeLabel(row.original) },
  { header: "Limits", cell: ({ row }) => <Limits apiKey={row.original} /> },
  {
    header: "Last used",
    cell: ({ row }) => <Time at={row.original.last_used_at} empty="Never" />,
  },
  {
    header: "Actions",
    cell: ({ row }) => (
      <span className="actions">
        <Link className="button" href={`/admin/settings/api-keys/${row.original.id}/edit${listSuffix(list)}`} aria-label={`Edit ${row.original.name}`}>
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
  return (
    <DataTable
      columns={columnsFor(props)}
      searchLabel="Search by name, key or secret"
      empty={empty}
      privateSearch={privateSearch}
      {...props}
    />
  );
}
