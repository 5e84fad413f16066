import type { Metadata } from "next";
import Link from "next/link";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { PageHeader } from "@/components/page-header";
import { requireAdminSession } from "@/lib/admin-session/session";
import { listQueryFromUrl } from "@/lib/list-query";
import { listPhpVersionsPage } from "@/lib/php/service";
import { PhpVersionsTable } from "./php-versions-table";

export const metadata: Metadata = { title: "PHP versions" };

export default async function PhpVersionsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { db } = await requireAdminSession();
  const query = listQueryFromUrl(await searchParams);
  const { rows, total } = await listPhpVersionsPage(db, query);
  return (
    <>
      <Breadcrumbs trail={[{ label: "Hosting" }, { label: "PHP versions" }]} />
      <PageHeader title="PHP versions">
        <Link className="button primary" href="/admin/php-versions/create">
          Add PHP version
        </Link>
      </PageHeader>
      <p className="muted">
        The PHP versions an account&apos;s domains can run, chosen on each domain&apos;s page. A version shown as not installed
        needs its PHP-FPM package on the server first.
      </p>
      <PhpVersionsTable rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
