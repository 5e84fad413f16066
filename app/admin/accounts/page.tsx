import type { Metadata } from "next";
import Link from "next/link";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { PageHeader } from "@/components/page-header";
import { listAccountsPage } from "@/lib/accounts/service";
import { requireAdminSession } from "@/lib/admin-session/session";
import { listQueryFromUrl } from "@/lib/list-query";
import { AccountsTable } from "./accounts-table";

export const metadata: Metadata = { title: "Hosting accounts" };

export default async function AccountsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { db } = await requireAdminSession();
  const query = listQueryFromUrl(await searchParams);
  const { rows, total } = await listAccountsPage(db, query);
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Hosting accounts" }]} />
      <PageHeader title="Hosting accounts">
        <Link className="button primary" href="/admin/accounts/create">
          Create account
        </Link>
      </PageHeader>
      <p className="muted">Each account has its main domain, its plan&apos;s quotas and, optionally, a reseller that owns it.</p>
      <AccountsTable rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
