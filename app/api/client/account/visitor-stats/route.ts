import { notImplemented } from "@/lib/http/with-api-key";
import { accountOperations } from "@/lib/accounts/operations";

// GET /api/client/account/visitor-stats — goAccess report of one domain, or the account's pre-generated combined report
export const GET = notImplemented(accountOperations.visitorStats);
