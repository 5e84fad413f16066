import type { Metadata } from "next";
import Link from "next/link";
import { listDnsRecords } from "@/lib/dns/service";
import { listDomains } from "@/lib/domains/service";
import { listQueryFromUrl, pageOfList } from "@/lib/list-query";
import { AccountHeader } from "../account-header";
import { accountOfPage, type AccountPageProps } from "../account-page";
import { accountPaths } from "../paths";
import { DnsTable } from "./dns-table";
import { zoneOf } from "./zone-of";
import { ZonePicker } from "./zone-picker";

export const metadata: Metadata = { title: "DNS records" };

export default async function AccountDnsPage({ params, searchParams }: AccountPageProps) {
  const { db, account } = await accountOfPage(params);
  const search = await searchParams;
  const query = listQueryFromUrl(search);
  const zones = (await listDomains(db, account.id)).map((domain) => ({ id: domain.id, domain: domain.domain }));
  const zone = zoneOf(zones, search.domain, account.domain);
  const paths = accountPaths(account.id);
  const records = await listDnsRecords(db, account.id, zone.id);
  const { rows, total } = pageOfList(records, query, (record) => `${record.name} ${record.type} ${record.content}`);
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "DNS records" }]}
        title={`DNS records of “${account.username}”`}
        action={
          <Link className="button primary" href={`${paths.dns}/create?domain=${zone.id}`}>
            Add record
          </Link>
        }
      />
      <ZonePicker path={paths.dns} zones={zones} current={zone.id} />
      <p className="muted">Every change bumps the zone&apos;s serial and rewrites its zone file. The SOA record is the panel&apos;s own.</p>
      <DnsTable accountId={account.id} zone={zone.domain} rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
