import { getDb } from "@/db/client";
import { emailOperations } from "@/lib/email/operations";
import { createAlias, listAliases } from "@/lib/email/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/email/aliases — the account's aliases and catch-alls
export const GET = withApiKey(emailOperations.listAliases, async ({ account }) => listAliases(await getDb(), account.id));

// POST /api/client/email/aliases — add an alias, or a catch-all (@domain)
export const POST = withApiKey(emailOperations.createAlias, async ({ account, body }) => createAlias(await getDb(), account.id, body));
