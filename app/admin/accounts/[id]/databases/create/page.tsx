import type { Metadata } from "next";
import { AccountHeader } from "../../account-header";
import { accountOfPage, type AccountPageProps } from "../../account-page";
import { accountPaths } from "../../paths";
import { CreateDatabaseForm } from "../database-form";

export const metadata: Metadata = { title: "Add database" };

export default async function CreateDatabasePage({ params }: Pick<AccountPageProps, "params">) {
  const { db, account } = await accountOfPage(params);
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "Databases", href: accountPaths(account.id).databases }, { label: "Add" }]}
        title={`Add a database to “${account.username}”`}
      />
      <CreateDatabaseForm account={{ id: account.id, username: account.username }} />
    </>
  );
}
