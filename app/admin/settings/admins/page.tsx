import type { Metadata } from "next";
import Link from "next/link";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { PageHeader } from "@/components/page-header";
import { requireAdminSession } from "@/lib/admin-session/session";
import { listAdminUsersPage } from "@/lib/admins/service";
import { listQueryFromUrl } from "@/lib/list-query";
import { AdminsTable } from "./admins-table";

export const metadata: Metadata = { title: "Admins" };

export default async function AdminsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { admin, db } = await requireAdminSession();
  const query = listQueryFromUrl(await searchParams);
  const { rows, total } = await listAdminUsersPage(db, query);
  return (
    <>
      <Breadcrumbs trail={[{ label: "Settings" }, { label: "Security" }, { label: "Admins" }]} />
      <PageHeader title="Admins">
        <Link className="button primary" href="/admin/settings/admins/create">
          Create admin
        </Link>
      </PageHeader>
      <p className="muted">
        Admins sign in to this panel. Disabling an admin or changing their password ends their sessions at once.
      </p>
      <AdminsTable rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} selfId={admin.adminUserId} />
    </>
  );
}
