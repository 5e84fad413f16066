import { getDb } from "@/db/client";
import { managerOf } from "@/lib/accounts/manager";
import { accountLifecycleOperations } from "@/lib/accounts/operations";
import { createAccount, listManagedAccounts } from "@/lib/accounts/service";
import { actorOf } from "@/lib/auth/authenticate";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/admin/accounts — the caller's accounts (all for an admin key), searched and filtered
export const GET = withApiKey(accountLifecycleOperations.list, async ({ principal, query }) =>
  listManagedAccounts(await getDb(), managerOf(principal), query),
);

// POST /api/admin/accounts — create an account (Idempotency-Key: a retry creates nothing)
export const POST = withApiKey(accountLifecycleOperations.create, async ({ principal, body }) =>
  createAccount(await getDb(), body, actorOf(principal), managerOf(principal)),
);
