import type { Metadata } from "next";
import { Breadcrumbs } from "@/components/breadcrumbs";
import { requireAdminSession } from "@/lib/admin-session/session";
import { mayHoldSecret } from "@/lib/api-keys/search-terms";
import { getApiKey } from "@/lib/api-keys/service";
import { listQueryFromUrl, listQueryString } from "@/lib/list-query";
import { recordOr404 } from "@/app/admin/record-or-404";
import { ApiKeyForm } from "../../api-key-form";
import { keyFormOptions } from "../../form-options";

export const metadata: Metadata = { title: "Edit API key" };

export default async function EditApiKeyPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { db } = await requireAdminSession();
  const key = await recordOr404((await params).id, (id) => getApiKey(db, id));
  // The list as the admin left it (page, rows per page, search): Save and Cancel go back there.
  const query = listQueryFromUrl(await searchParams);
  const back = listQueryString({ ...query, search: mayHoldSecret(query.search) ? "" : query.search });
  const listHref = `/admin/settings/api-keys${back ? `?${back}` : ""}`;
  return (
    <>
      <Breadcrumbs trail={[{ label: "Settings" }, { label: "Security" }, { label: "API Keys", href: listHref }, { label: key.name }]} />
      <h1>Edit API key</h1>
      <p className="muted">
        Key <code>{key.key}</code> · secret <code>{key.secret_masked}</code> (not shown again)
      </p>
      <ApiKeyForm
        keyId={key.id}
        listHref={listHref}
        initial={{
          name: key.name,
          is_enabled: key.is_enabled,
          allowed_ips: key.allowed_ips,
          allow_all_endpoints: key.allow_all_endpoints,
          allowed_endpoints: key.allowed_endpoints,
          scope: key.scope,
          reseller_id: key.reseller_id,
          account_id: key.account_id,
        }}
        {...await keyFormOptions(db)}
      />
    </>
  );
}
