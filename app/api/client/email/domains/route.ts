import { getDb } from "@/db/client";
import { emailOperations } from "@/lib/email/operations";
import { createMailDomain, listMailDomains } from "@/lib/email/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/email/domains — the account's mail domains, with the DNS records mail needs
export const GET = withApiKey(emailOperations.listDomains, async ({ account }) => listMailDomains(await getDb(), account.id));

// POST /api/client/email/domains — receive mail for one of the account's domains
export const POST = withApiKey(emailOperations.createDomain, async ({ account, body }) => createMailDomain(await getDb(), account.id, body));
