import type { Metadata } from "next";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { listDomains } from "@/lib/domains/service";
import { listPhpVersions } from "@/lib/php/service";
import { AccountHeader } from "../../account-header";
import { accountPaths } from "../../paths";
import { CreateDomainForm } from "../domain-forms";
import { phpVersionChoices } from "../php-choices";

export const metadata: Metadata = { title: "Add domain" };

export default async function CreateDomainPage({ params }: { params: Promise<{ id: string }> }) {
  const { db } = await requireAdminSession();
  const account = await recordOr404((await params).id, (id) => getAccount(db, id));
  const [domains, phpVersions] = await Promise.all([listDomains(db, account.id), listPhpVersions(db)]);
  return (
    <>
      <AccountHeader
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
