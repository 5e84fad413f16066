import { getDb } from "@/db/client";
import { domainOperations } from "@/lib/domains/operations";
import { createDomain, listDomains } from "@/lib/domains/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/domains — the account's domains, subdomains and parked domains
export const GET = withApiKey(domainOperations.list, async ({ account }) => listDomains(await getDb(), account.id));

// POST /api/client/domains — add a domain, subdomain or parked domain (its DNS zone is provisioned)
export const POST = withApiKey(domainOperations.create, async ({ account, body }) =>
  createDomain(await getDb(), account.id, body),
);
