import type { Metadata } from "next";
import Link from "next/link";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { accountDatabaseUsers } from "@/lib/accounts/overview";
import { listQueryFromUrl, pageOfList } from "@/lib/list-query";
import { AccountHeader } from "../account-header";
import { accountPaths } from "../paths";
import { DatabaseUsersTable } from "./database-users-table";

export const metadata: Metadata = { title: "Database users" };

export default async function AccountDatabaseUsersPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { db } = await requireAdminSession();
  const account = await recordOr404((await params).id, (id) => getAccount(db, id));
  const query = listQueryFromUrl(await searchParams);
  const users = await accountDatabaseUsers(db, account.id);
  const { rows, total } = pageOfList(users, query, (user) => `${user.username} ${user.databases.map((database) => database.database_name).join(" ")}`);
  return (
    <>
      <AccountHeader
        account={account}
        trail={[{ label: "Database users" }]}
        title={`Database users of “${account.username}”`}
        action={
          <Link className="button primary" href={`${accountPaths(account.id).databaseUsers}/create`}>
            Add database user
          </Link>
        }
      />
      <p className="muted">The MariaDB users the account&apos;s applications log in as, and the databases each may use.</p>
      <DatabaseUsersTable accountId={account.id} rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
