"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { useState } from "react";
import { ActionButton } from "@/components/action-button";
import { DataTable } from "@/components/data-table";
import type { DnsRecord } from "@/lib/dns/service";
import { accountPaths } from "../paths";
import { deleteDnsRecordAction } from "./actions";

/** What else a record of its type says: MX priority, SRV priority, weight and port. */
function extras(record: DnsRecord) {
  if (record.type === "MX") return `priority ${record.priority}`;
  if (record.type === "SRV") return `priority ${record.priority}, weight ${record.weight}, port ${record.port}`;
  return "";
}

/** One zone's records: SOA listed (the panel's own), the others edited and deleted. */
export function DnsTable({ accountId, zone, ...props }: { accountId: number; zone: string; rows: DnsRecord[]; total: number; page: number; perPage: number; search: string }) {
  const paths = accountPaths(accountId);
  const [warning, setWarning] = useState<string | null>(null);
  const columns: ColumnDef<DnsRecord, unknown>[] = [
    { header: "Name", cell: ({ row }) => <code>{row.original.name === "@" ? zone : `${row.original.name}.${zone}`}</code> },
    { header: "Type", cell: ({ row }) => row.original.type },
    {
      header: "Content",
      cell: ({ row }) => (
        <>
          <code className="wrap">{row.original.content}</code>
          {extras(row.original) && <div className="muted">{extras(row.original)}</div>}
        </>
      ),
    },
    { header: "TTL", cell: ({ row }) => `${row.original.ttl} s` },
    {
      header: "Actions",
      cell: ({ row }) => {
        const record = row.original;
        if (record.type === "SOA") return <span className="muted">kept by the panel</span>;
        const label = `${record.type} ${record.name === "@" ? zone : `${record.name}.${zone}`}`;
        return (
          <span className="actions">
            <Link className="button" href={`${paths.dns}/${record.id}/edit`} aria-label={`Edit ${label} ${record.content}`}>
              Edit
            </Link>
            <ActionButton
              label="Delete"
              danger
              subject={label}
              ariaLabel={`Delete ${label} ${record.content}`}
              confirm={`Delete the ${label} record (${record.content})?`}
              action={() => deleteDnsRecordAction(accountId, record.id)}
              done={(zoneWarning) => setWarning((zoneWarning as string | null | undefined) ?? null)}
            />
          </span>
        );
      },
    },
  ];
  const empty = props.search ? <p>No record matches “{props.search}”.</p> : <p>No records.</p>;
  return (
    <>
      {warning && (
        <p className="notice" role="status">
          {warning}
        </p>
      )}
      <DataTable columns={columns} searchLabel="Search records" empty={empty} {...props} />
    </>
  );
}
