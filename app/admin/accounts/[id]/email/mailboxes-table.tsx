"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { ActionButton } from "@/components/action-button";
import { DataTable } from "@/components/data-table";
import { Badge } from "@/components/status";
import { Time } from "@/components/time";
import { amount } from "@/components/usage-bar";
import type { AliasRecord, MailboxRecord } from "@/lib/email/schemas";
import { accountPaths } from "../paths";
import { deleteAliasAction, deleteMailboxAction } from "./actions";

type ListProps<Row> = { accountId: number; rows: Row[]; total: number; page: number; perPage: number; search: string };

/** The account's mailboxes: quota, space used, enabled; edit (password, quota, enabled) and delete. Never a password or its hash. */
export function MailboxesTable({ accountId, ...props }: ListProps<MailboxRecord>) {
  const email = accountPaths(accountId).email;
  const columns: ColumnDef<MailboxRecord, unknown>[] = [
    { header: "Address", cell: ({ row }) => <strong>{row.original.address}</strong> },
    { header: "Quota", cell: ({ row }) => amount(row.original.quota_mb, "MB") },
    { header: "Used", cell: ({ row }) => amount(row.original.used_mb, "MB") },
    { header: "Enabled", cell: ({ row }) => (row.original.enabled ? <Badge tone="ok">Enabled</Badge> : <Badge tone="neutral">Disabled</Badge>) },
    { header: "Created", cell: ({ row }) => <Time at={row.original.created_at} /> },
    {
      header: "Actions",
      cell: ({ row }) => (
        <span className="actions">
          <Link className="button" href={`${email}/mailboxes/${row.original.id}/edit`} aria-label={`Edit ${row.original.address}`}>
            Edit
          </Link>
          <ActionButton
            label="Delete"
            danger
            subject={`Mailbox ${row.original.address}`}
            ariaLabel={`Delete ${row.original.address}`}
            confirm={`Delete the mailbox ${row.original.address}?\n\nIt stops receiving mail and its logins are refused. Its mail stays in the account's home (mail/), but the panel no longer serves it.`}
            action={() => deleteMailboxAction(accountId, row.original.id)}
          />
        </span>
      ),
    },
  ];
  const empty = props.search ? <p>No mailbox matches “{props.search}”.</p> : <p>No mailboxes yet.</p>;
  return <DataTable name="mailboxes" columns={columns} searchLabel="Search mailboxes" empty={empty} {...props} />;
}

/** The account's aliases and catch-alls, with where each sends its mail; delete. */
export function AliasesTable({ accountId, ...props }: ListProps<AliasRecord>) {
  const columns: ColumnDef<AliasRecord, unknown>[] = [
    {
      header: "Address",
      cell: ({ row }) => (
        <>
          <strong>{row.original.address}</strong>
          {row.original.address.startsWith("@") && <span className="muted"> (catch-all)</span>}
        </>
      ),
    },
    {
      header: "Forwards to",
      cell: ({ row }) => (
        <ul className="plain">
          {row.original.targets.map((target) => (
            <li key={target}>{target}</li>
          ))}
        </ul>
      ),
    },
    {
      header: "Actions",
      cell: ({ row }) => (
        <ActionButton
          label="Delete"
          danger
          subject={`${row.original.address.startsWith("@") ? "Catch-all" : "Alias"} ${row.original.address}`}
          ariaLabel={`Delete ${row.original.address}`}
          confirm={`Delete ${row.original.address.startsWith("@") ? "the catch-all" : "the alias"} ${row.original.address}?\n\nMail to it is no longer forwarded.`}
          action={() => deleteAliasAction(accountId, row.original.id)}
        />
      ),
    },
  ];
  const empty = props.search ? <p>No alias matches “{props.search}”.</p> : <p>No aliases yet.</p>;
  return <DataTable name="aliases" columns={columns} searchLabel="Search aliases" empty={empty} {...props} />;
}
