import type { Metadata } from "next";
import { listDomains } from "@/lib/domains/service";
import { AccountHeader } from "../../../account-header";
import { accountOfPage, type AccountPageProps } from "../../../account-page";
import { accountPaths } from "../../../paths";
import { CreateAliasForm } from "../../mail-forms";

export const metadata: Metadata = { title: "Add alias" };

export default async function CreateAliasPage({ params }: Pick<AccountPageProps, "params">) {
  const { db, account } = await accountOfPage(params);
  const domains = (await listDomains(db, account.id)).map((domain) => domain.domain);
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "Email", href: accountPaths(account.id).email }, { label: "Add alias" }]}
        title={`Add an alias to “${account.username}”`}
      />
      <CreateAliasForm accountId={account.id} domains={domains} />
    </>
  );
}
