import { getDb } from "@/db/client";
import { domainOperations } from "@/lib/domains/operations";
import { deleteDomain, getDomainOrThrow, updateDomain } from "@/lib/domains/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/domains/{id} — one domain
export const GET = withApiKey(domainOperations.get, async ({ account, params }) =>
  getDomainOrThrow(await getDb(), { accountId: account.id, id: params.id }),
);

// PUT /api/client/domains/{id} — how the site is served (site_profile, proxy_socket)
export const PUT = withApiKey(domainOperations.update, async ({ account, params, body }) =>
  updateDomain(await getDb(), account.id, params.id, body),
);

// DELETE /api/client/domains/{id} — delete a domain, its zone and its site; its files stay
export const DELETE = withApiKey(domainOperations.delete, async ({ account, params }) =>
  deleteDomain(await getDb(), account.id, params.id),
);
