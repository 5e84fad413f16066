import type { Metadata } from "next";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { listDomains } from "@/lib/domains/service";
import { AccountHeader } from "../../account-header";
import { accountPaths } from "../../paths";
import { CreateRecordForm } from "../record-forms";
import { zoneOf } from "../zone-of";

export const metadata: Metadata = { title: "Add DNS record" };

export default async function CreateDnsRecordPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { db } = await requireAdminSession();
  const account = await recordOr404((await params).id, (id) => getAccount(db, id));
  const zones = (await listDomains(db, account.id)).map((domain) => ({ id: domain.id, domain: domain.domain }));
  const zone = zoneOf(zones, (await searchParams).domain, account.domain);
  return (
    <>
      <AccountHeader
        account={account}
        trail={[{ label: "DNS records", href: `${accountPaths(account.id).dns}?domain=${zone.id}` }, { label: "Add" }]}
        title={`Add a DNS record to “${account.username}”`}
      />
      <CreateRecordForm accountId={account.id} zones={zones} zoneId={zone.id} />
    </>
  );
}
