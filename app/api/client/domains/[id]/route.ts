import { getDb } from "@/db/client";
import { domainOperations } from "@/lib/domains/operations";
import { deleteDomain, getDomainOrThrow } from "@/lib/domains/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/domains/{id} — one domain
export const GET = withApiKey(domainOperations.get, async ({ account, params }) =>
  getDomainOrThrow(await getDb(), { accountId: account.id, id: params.id }),
);

// DELETE /api/client/domains/{id} — delete a domain, its zone and its site; its files stay
export const DELETE = withApiKey(domainOperations.delete, async ({ account, params }) =>
  deleteDomain(await getDb(), account.id, params.id),
);
