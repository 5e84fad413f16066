import type { Metadata } from "next";
import { AccountHeader } from "../../account-header";
import { accountOfPage, type AccountPageProps } from "../../account-page";
import { accountPaths } from "../../paths";
import { CreateDatabaseUserForm } from "../database-user-forms";

export const metadata: Metadata = { title: "Add database user" };

export default async function CreateDatabaseUserPage({ params }: Pick<AccountPageProps, "params">) {
  const { db, account } = await accountOfPage(params);
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "Database users", href: accountPaths(account.id).databaseUsers }, { label: "Add" }]}
        title={`Add a database user to “${account.username}”`}
      />
      <CreateDatabaseUserForm account={{ id: account.id, username: account.username }} />
    </>
  );
}
