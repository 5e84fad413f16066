import { getDb } from "@/db/client";
import { suspendAccount } from "@/lib/accounts/lifecycle";
import { managerOf } from "@/lib/accounts/manager";
import { accountLifecycleOperations } from "@/lib/accounts/operations";
import { actorOf } from "@/lib/auth/authenticate";
import { withApiKey } from "@/lib/http/with-api-key";

// POST /api/admin/accounts/{id}/suspend — suspend (already suspended: 200, unchanged)
export const POST = withApiKey(accountLifecycleOperations.suspend, async ({ principal, params, body }) =>
  suspendAccount(await getDb(), managerOf(principal), params.id, body?.reason, actorOf(principal)),
);
