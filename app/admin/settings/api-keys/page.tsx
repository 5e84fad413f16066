import type { Metadata } from "next";
import Link from "next/link";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { getDb } from "@/db/client";
import { apiKeyListQuerySchema } from "@/lib/api-keys/schemas";
import { listApiKeys } from "@/lib/api-keys/service";
import { ApiKeysTable } from "./api-keys-table";

export const metadata: Metadata = { title: "API Keys" };

export default async function ApiKeysPage({ searchParams }: { searchParams: Promise<Record<string, string>> }) {
  const parsed = apiKeyListQuerySchema.safeParse(await searchParams);
  const query = parsed.success ? parsed.data : apiKeyListQuerySchema.parse({});
  const { rows, total } = await listApiKeys(await getDb(), query);
  return (
    <>
      <Breadcrumbs trail={[{ label: "Settings" }, { label: "Security" }, { label: "API Keys" }]} />
      <div className="actions" style={{ justifyContent: "space-between" }}>
        <h1>API Keys</h1>
        <Link className="button primary" href="/admin/settings/api-keys/create">
          Create API key
        </Link>
      </div>
      <p className="muted">
        Keys let billing systems, deploy scripts and plugins use the REST API. The secret is shown once, when a key is
        created.
      </p>
      <ApiKeysTable rows={rows} total={total} page={query.page} perPage={query.per_page} search={query.search} />
    </>
  );
}
