"use client";

import type { ColumnDef } from "@tanstack/react-table";
import Link from "next/link";
import { ActionButton } from "@/components/action-button";
import { DataTable } from "@/components/data-table";
import type { DomainRecord } from "@/lib/domains/service";
import { accountPaths } from "../paths";
import { CertificateState, SiteProfile } from "./domain-facts";
import { deleteDomainAction } from "./actions";

/** The account's domains: name, type, document root, how the site runs, certificate; edit, its DNS records, delete. */
export function DomainsTable({
  account,
  names,
  ...props
}: {
  account: { id: number; domain: string };
  /** Every domain's name by id, for the domain a subdomain or parked domain hangs on. */
  names: Record<number, string>;
  rows: DomainRecord[];
  total: number;
  page: number;
  perPage: number;
  search: string;
}) {
  const paths = accountPaths(account.id);
  const kindOf = (domain: DomainRecord) => {
    if (domain.domain === account.domain) return "main domain";
    if (domain.domain_type === "parked") return `parked on ${names[domain.parked_on_domain_id!] ?? "?"}`;
    if (domain.domain_type === "subdomain") return `subdomain of ${names[domain.parent_domain_id!] ?? "?"}`;
    return "domain";
  };
  const columns: ColumnDef<DomainRecord, unknown>[] = [
    {
      header: "Domain",
      cell: ({ row }) => (
        <>
          <strong>{row.original.domain}</strong>
          <div className="muted">{kindOf(row.original)}</div>
        </>
      ),
    },
    { header: "Document root", cell: ({ row }) => (row.original.domain_path ? <code>{row.original.domain_path}</code> : <span className="muted">its domain&apos;s</span>) },
    { header: "Site", cell: ({ row }) => <SiteProfile domain={row.original} /> },
    { header: "Certificate", cell: ({ row }) => <CertificateState ssl={row.original.ssl} /> },
    {
      header: "Actions",
      cell: ({ row }) => (
        <span className="actions">
          <Link className="button" href={`${paths.domains}/${row.original.id}/edit`} aria-label={`Edit ${row.original.domain}`}>
            Edit
          </Link>
          <Link className="button" href={`${paths.dns}?domain=${row.original.id}`} aria-label={`DNS records of ${row.original.domain}`}>
            DNS
          </Link>
          {row.original.domain !== account.domain && (
            <ActionButton
              label="Delete"
              danger
              subject={row.original.domain}
              ariaLabel={`Delete ${row.original.domain}`}
              confirm={`Delete the domain ${row.original.domain}?\n\nIts site, DNS zone and certificate are removed. Its files stay in the account's home directory.`}
              action={() => deleteDomainAction(account.id, row.original.id)}
            />
          )}
        </span>
      ),
    },
  ];
  const empty = props.search ? <p>No domain matches “{props.search}”.</p> : <p>No domains.</p>;
  return <DataTable columns={columns} searchLabel="Search domains" empty={empty} {...props} />;
}
