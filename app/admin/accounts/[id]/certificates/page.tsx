import type { Metadata } from "next";
import { listDomains } from "@/lib/domains/service";
import { AccountHeader } from "../account-header";
import { accountOfPage, type AccountPageProps } from "../account-page";
import { Certificates } from "./certificates";

export const metadata: Metadata = { title: "Certificates" };

export default async function AccountCertificatesPage({ params }: AccountPageProps) {
  const { db, account } = await accountOfPage(params);
  return (
    <>
      <AccountHeader db={db} account={account} trail={[{ label: "Certificates" }]} title={`Certificates of “${account.username}”`} />
      <Certificates accountId={account.id} autoSsl={account.is_auto_ssl_enabled} domains={await listDomains(db, account.id)} />
    </>
  );
}
