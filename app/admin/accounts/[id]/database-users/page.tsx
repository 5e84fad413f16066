import type { Metadata } from "next";
import Link from "next/link";
import { accountDatabaseUsers } from "@/lib/accounts/overview";
import { listQueryFromUrl, pageOfList } from "@/lib/list-query";
import { AccountHeader } from "../account-header";
import { accountOfPage, type AccountPageProps } from "../account-page";
import { accountPaths } from "../paths";
import { MariaDbNotice } from "../databases/mariadb-notice";
import { DatabaseUsersTable } from "./database-users-table";

export const metadata: Metadata = { title: "Database users" };

export default async function AccountDatabaseUsersPage({ params, searchParams }: AccountPageProps) {
  const { db, account } = await accountOfPage(params);
  const query = listQueryFromUrl(await searchParams);
  const users = await accountDatabaseUsers(db, account.id);
  const { rows, total } = pageOfList(users, query, (user) => `${user.username} ${user.databases.map((database) => database.database_name).join(" ")}`);
  return (
    <>
      <AccountHeader
        db={db}
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
      <MariaDbNotice node={account.node} />
      <DatabaseUsersTable accountId={account.id} rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
