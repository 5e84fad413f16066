import { notImplemented } from "@/lib/http/with-api-key";
import { accountOperations } from "@/lib/accounts/operations";

// GET /api/client/account/usage-details — counts of domains, databases, database users and DNS records against the plan
export const GET = notImplemented(accountOperations.usageDetails);
