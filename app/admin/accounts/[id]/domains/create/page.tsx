import type { Metadata } from "next";
import { listDomains } from "@/lib/domains/service";
import { listPhpVersions } from "@/lib/php/service";
import { AccountHeader } from "../../account-header";
import { accountOfPage, type AccountPageProps } from "../../account-page";
import { accountPaths } from "../../paths";
import { CreateDomainForm } from "../domain-forms";
import { phpVersionChoices } from "../php-choices";

export const metadata: Metadata = { title: "Add domain" };

export default async function CreateDomainPage({ params }: Pick<AccountPageProps, "params">) {
  const { db, account } = await accountOfPage(params);
  const [domains, phpVersions] = await Promise.all([listDomains(db, account.id), listPhpVersions(db)]);
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "Domains", href: accountPaths(account.id).domains }, { label: "Add" }]}
        title={`Add a domain to “${account.username}”`}
      />
      <CreateDomainForm
        accountId={account.id}
        domains={domains.filter((domain) => domain.domain_type !== "parked").map((domain) => ({ value: String(domain.id), label: domain.domain }))}
        phpVersions={phpVersionChoices(phpVersions)}
      />
    </>
  );
}
