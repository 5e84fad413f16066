import type { Metadata } from "next";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { accountDatabases } from "@/lib/accounts/overview";
import { getDatabaseUserOrThrow } from "@/lib/databases/service";
import { AccountHeader } from "../../../account-header";
import { accountPaths } from "../../../paths";
import { UserDatabases } from "../../database-user-forms";

export const metadata: Metadata = { title: "Edit database user" };

export default async function EditDatabaseUserPage({ params }: { params: Promise<{ id: string; userId: string }> }) {
  const { db } = await requireAdminSession();
  const { id, userId } = await params;
  const account = await recordOr404(id, (accountId) => getAccount(db, accountId));
  const user = await recordOr404(userId, (userIdNumber) => getDatabaseUserOrThrow(db, { accountId: account.id, id: userIdNumber }));
  const databases = await accountDatabases(db, account.id);
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "Database users", href: accountPaths(account.id).databaseUsers }, { label: user.username }]}
        title={`Database user “${user.username}”`}
      />
      <UserDatabases
        accountId={account.id}
        user={user}
        databases={databases.map((database) => ({ id: database.id, database_name: database.database_name }))}
      />
    </>
  );
}
