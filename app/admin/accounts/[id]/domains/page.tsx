import type { Metadata } from "next";
import Link from "next/link";
import { listDomains } from "@/lib/domains/service";
import { listQueryFromUrl, pageOfList } from "@/lib/list-query";
import { AccountHeader } from "../account-header";
import { accountOfPage, type AccountPageProps } from "../account-page";
import { accountPaths } from "../paths";
import { DomainsTable } from "./domains-table";

export const metadata: Metadata = { title: "Domains" };

export default async function AccountDomainsPage({ params, searchParams }: AccountPageProps) {
  const { db, account } = await accountOfPage(params);
  const query = listQueryFromUrl(await searchParams);
  const domains = await listDomains(db, account.id);
  const { rows, total } = pageOfList(domains, query, (domain) => `${domain.domain} ${domain.domain_path ?? ""}`);
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "Domains" }]}
        title={`Domains of “${account.username}”`}
        action={
          <Link className="button primary" href={`${accountPaths(account.id).domains}/create`}>
            Add domain
          </Link>
        }
      />
      <p className="muted">
        Each domain is a site of the account with its own DNS zone; a subdomain lives under one of them, a parked domain shows the site of the
        domain it is parked on.
      </p>
      <DomainsTable
        account={{ id: account.id, domain: account.domain }}
        names={Object.fromEntries(domains.map((domain) => [domain.id, domain.domain]))}
        rows={rows}
        total={total}
        page={query.page}
        perPage={query.per_page}
        search={query.search}
      />
    </>
  );
}
