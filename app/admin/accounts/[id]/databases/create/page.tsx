import type { Metadata } from "next";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { AccountHeader } from "../../account-header";
import { accountPaths } from "../../paths";
import { CreateDatabaseForm } from "../database-form";

export const metadata: Metadata = { title: "Add database" };

export default async function CreateDatabasePage({ params }: { params: Promise<{ id: string }> }) {
  const { db } = await requireAdminSession();
  const account = await recordOr404((await params).id, (id) => getAccount(db, id));
  return (
    <>
      <AccountHeader
        account={account}
        trail={[{ label: "Databases", href: accountPaths(account.id).databases }, { label: "Add" }]}
        title={`Add a database to “${account.username}”`}
      />
      <CreateDatabaseForm account={{ id: account.id, username: account.username }} />
    </>
  );
}
