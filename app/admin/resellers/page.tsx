import type { Metadata } from "next";
import Link from "next/link";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { PageHeader } from "@/components/page-header";
import { requireAdminSession } from "@/lib/admin-session/session";
import { listQueryFromUrl } from "@/lib/list-query";
import { listResellersPage } from "@/lib/resellers/service";
import { ResellersTable } from "./resellers-table";

export const metadata: Metadata = { title: "Resellers" };

export default async function ResellersPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { db } = await requireAdminSession();
  const query = listQueryFromUrl(await searchParams);
  const { rows, total } = await listResellersPage(db, query);
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "Resellers" }]} />
      <PageHeader title="Resellers">
        <Link className="button primary" href="/admin/resellers/create">
          Create reseller
        </Link>
      </PageHeader>
      <p className="muted">A reseller&apos;s API key reaches only the hosting accounts it owns.</p>
      <ResellersTable rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
