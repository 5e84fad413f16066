import { getDb } from "@/db/client";
import { accountLifecycleOperations } from "@/lib/accounts/operations";
import { withApiKey } from "@/lib/http/with-api-key";
import { listPlans } from "@/lib/plans/service";

// GET /api/admin/plans — the plans accounts are created on or changed to
export const GET = withApiKey(accountLifecycleOperations.plans, async () => listPlans(await getDb()));
