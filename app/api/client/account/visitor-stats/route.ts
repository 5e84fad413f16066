import { getDb } from "@/db/client";
import { accountOperations } from "@/lib/accounts/operations";
import { visitorStats } from "@/lib/accounts/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/account/visitor-stats — GoAccess report of one domain (?domain=), or the account's combined report
export const GET = withApiKey(accountOperations.visitorStats, async ({ account, query }) =>
  visitorStats(await getDb(), account, query.domain),
);
