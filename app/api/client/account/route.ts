import { getDb } from "@/db/client";
import { accountOperations } from "@/lib/accounts/operations";
import { getAccount } from "@/lib/accounts/service";
import { notImplemented, withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/account — the caller's hosting account
export const GET = withApiKey(accountOperations.get, async ({ account }) => getAccount(await getDb(), account.id));

// PUT /api/client/account — update the profile fields and the auto-SSL toggle
export const PUT = notImplemented(accountOperations.update);
