import type { Metadata } from "next";
import Link from "next/link";
import { accountDatabases } from "@/lib/accounts/overview";
import { listQueryFromUrl, pageOfList } from "@/lib/list-query";
import { AccountHeader } from "../account-header";
import { accountOfPage, type AccountPageProps } from "../account-page";
import { accountPaths } from "../paths";
import { DatabasesTable } from "./databases-table";
import { MariaDbNotice } from "./mariadb-notice";

export const metadata: Metadata = { title: "Databases" };

export default async function AccountDatabasesPage({ params, searchParams }: AccountPageProps) {
  const { db, account } = await accountOfPage(params);
  const query = listQueryFromUrl(await searchParams);
  const databases = await accountDatabases(db, account.id);
  const { rows, total } = pageOfList(databases, query, (database) => database.database_name);
  const paths = accountPaths(account.id);
  return (
    <>
      <AccountHeader
        db={db}
        account={account}
        trail={[{ label: "Databases" }]}
        title={`Databases of “${account.username}”`}
        action={
          <Link className="button primary" href={`${paths.databases}/create`}>
            Add database
          </Link>
        }
      />
      <p className="muted">
        MariaDB databases of the account. A database is reached by its <Link href={paths.databaseUsers}>database users</Link>, each with the
        privileges given to it there.
      </p>
      <MariaDbNotice node={account.node} />
      <DatabasesTable accountId={account.id} rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
