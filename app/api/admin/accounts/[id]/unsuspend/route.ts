import { getDb } from "@/db/client";
import { unsuspendAccount } from "@/lib/accounts/lifecycle";
import { managerOf } from "@/lib/accounts/manager";
import { accountLifecycleOperations } from "@/lib/accounts/operations";
import { actorOf } from "@/lib/auth/authenticate";
import { withApiKey } from "@/lib/http/with-api-key";

// POST /api/admin/accounts/{id}/unsuspend — lift a suspension (already active: 200, unchanged)
export const POST = withApiKey(accountLifecycleOperations.unsuspend, async ({ principal, params }) =>
  unsuspendAccount(await getDb(), managerOf(principal), params.id, actorOf(principal)),
);
