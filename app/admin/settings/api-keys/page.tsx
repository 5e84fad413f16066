import type { Metadata } from "next";
import Link from "next/link";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { PageHeader } from "@/components/page-header";
import { redirect } from "next/navigation";
import { requireAdminSession } from "@/lib/admin-session/session";
import { mayHoldSecret } from "@/lib/api-keys/search-terms";
import { listApiKeys } from "@/lib/api-keys/service";
import { listQueryFromUrl, listQueryString } from "@/lib/list-query";
import { ApiKeysTable } from "./api-keys-table";

export const metadata: Metadata = { title: "API Keys" };

export default async function ApiKeysPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { db } = await requireAdminSession();
  const query = listQueryFromUrl(await searchParams);
  // A search that may hold a secret is never answered from a URL (the search box sends it by
  // POST): the list drops it, so a link or a bookmark with a secret in it finds nothing.
  if (mayHoldSecret(query.search)) {
    const rest = listQueryString({ ...query, search: "", page: 1 });
    redirect(`/admin/settings/api-keys${rest ? `?${rest}` : ""}`);
  }
  const { rows, total } = await listApiKeys(db, query);
  return (
    <>
      <Breadcrumbs trail={[{ label: "Settings" }, { label: "Security" }, { label: "API Keys" }]} />
      <PageHeader title="API Keys">
        <Link className="button primary" href="/admin/settings/api-keys/create">
          Create API key
        </Link>
      </PageHeader>
      <p className="muted">
        Keys let billing systems, deploy scripts and plugins use the REST API. The secret is shown once, when a key is
        created.
      </p>
      <ApiKeysTable rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
