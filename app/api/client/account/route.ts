import { getDb } from "@/db/client";
import { accountOperations } from "@/lib/accounts/operations";
import { getAccount, updateAccountProfile } from "@/lib/accounts/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/account — the caller's hosting account
export const GET = withApiKey(accountOperations.get, async ({ account }) => getAccount(await getDb(), account.id));

// PUT /api/client/account — update the profile fields and the auto-SSL toggle
export const PUT = withApiKey(accountOperations.update, async ({ account, body }) =>
  updateAccountProfile(await getDb(), account.id, body),
);
