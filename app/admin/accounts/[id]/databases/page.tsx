import type { Metadata } from "next";
import Link from "next/link";
import { recordOr404 } from "@/app/admin/record-or-404";
import { getAccount } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { accountDatabases } from "@/lib/accounts/overview";
import { listQueryFromUrl, pageOfList } from "@/lib/list-query";
import { AccountHeader } from "../account-header";
import { accountPaths } from "../paths";
import { DatabasesTable } from "./databases-table";

export const metadata: Metadata = { title: "Databases" };

export default async function AccountDatabasesPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { db } = await requireAdminSession();
  const account = await recordOr404((await params).id, (id) => getAccount(db, id));
  const query = listQueryFromUrl(await searchParams);
  const databases = await accountDatabases(db, account.id);
  const { rows, total } = pageOfList(databases, query, (database) => database.database_name);
  const paths = accountPaths(account.id);
  return (
    <>
      <AccountHeader
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
      <DatabasesTable accountId={account.id} rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
