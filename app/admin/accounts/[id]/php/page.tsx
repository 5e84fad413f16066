import type { Metadata } from "next";
import { getPhpSettings } from "@/lib/php-settings/service";
import { AccountHeader } from "../account-header";
import { accountOfPage, type AccountPageProps } from "../account-page";
import { Applications } from "./applications";

export const metadata: Metadata = { title: "PHP" };

// The account's PHP settings, in every pool of its sites (each domain's PHP version is on the Domains tab).
export default async function AccountPhpPage({ params }: AccountPageProps) {
  const { db, account } = await accountOfPage(params);
  return (
    <>
      <AccountHeader db={db} account={account} trail={[{ label: "PHP" }]} title={`PHP of “${account.username}”`} />
      <Applications accountId={account.id} php={await getPhpSettings(db, account.id)} />
    </>
  );
}
