import { getDb } from "@/db/client";
import { accountOperations } from "@/lib/accounts/operations";
import { getUsageDetails } from "@/lib/accounts/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/account/usage-details — counts of domains, databases, database users and DNS records against the plan
export const GET = withApiKey(accountOperations.usageDetails, async ({ account }) =>
  getUsageDetails(await getDb(), account.id),
);
