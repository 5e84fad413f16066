import type { Metadata } from "next";
import { listDomains } from "@/lib/domains/service";
import { AccountHeader } from "../../account-header";
import { accountOfPage, type AccountPageProps } from "../../account-page";
import { accountPaths } from "../../paths";
import { CreateRecordForm } from "../record-forms";
import { zoneOf } from "../zone-of";

export const metadata: Metadata = { title: "Add DNS record" };

export default async function CreateDnsRecordPage({ params, searchParams }: AccountPageProps) {
  const { db, account } = await accountOfPage(params);
  const zones = (await listDomains(db, account.id)).map((domain) => ({ id: domain.id, domain: domain.domain }));
  const zone = zoneOf(zones, (await searchParams).domain, account.domain);
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "DNS records", href: `${accountPaths(account.id).dns}?domain=${zone.id}` }, { label: "Add" }]}
        title={`Add a DNS record to “${account.username}”`}
      />
      <CreateRecordForm accountId={account.id} zones={zones} zoneId={zone.id} />
    </>
  );
}
