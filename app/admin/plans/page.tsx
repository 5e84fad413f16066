import type { Metadata } from "next";
import Link from "next/link";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { PageHeader } from "@/components/page-header";
import { requireAdminSession } from "@/lib/admin-session/session";
import { listQueryFromUrl } from "@/lib/list-query";
import { listPlansPage } from "@/lib/plans/service";
import { PlansTable } from "./plans-table";

export const metadata: Metadata = { title: "Plans" };

export default async function PlansPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { db } = await requireAdminSession();
  const query = listQueryFromUrl(await searchParams);
  const { rows, total } = await listPlansPage(db, query);
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Plans" }]} />
      <PageHeader title="Plans">
        <Link className="button primary" href="/admin/plans/create">
          Create plan
        </Link>
      </PageHeader>
      <p className="muted">
        A plan sets the quotas of the hosting accounts on it. Accounts created without a plan get <code>default</code>.
      </p>
      <PlansTable rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
