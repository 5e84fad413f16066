import type { Metadata } from "next";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { AccountHeader } from "../../account-header";
import { accountPaths } from "../../paths";
import { CreateDatabaseUserForm } from "../database-user-forms";

export const metadata: Metadata = { title: "Add database user" };

export default async function CreateDatabaseUserPage({ params }: { params: Promise<{ id: string }> }) {
  const { db } = await requireAdminSession();
  const account = await recordOr404((await params).id, (id) => getAccount(db, id));
  return (
    <>
      <AccountHeader
        account={account}
        trail={[{ label: "Database users", href: accountPaths(account.id).databaseUsers }, { label: "Add" }]}
        title={`Add a database user to “${account.username}”`}
      />
      <CreateDatabaseUserForm account={{ id: account.id, username: account.username }} />
    </>
  );
}
