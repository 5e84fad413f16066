import { notImplemented } from "@/lib/http/with-api-key";
import { dnsOperations } from "@/lib/dns/operations";

// GET /api/client/dns-records — records of one of the account's zones
export const GET = notImplemented(dnsOperations.list);

// POST /api/client/dns-records — add a record to one of the account's zones
export const POST = notImplemented(dnsOperations.create);
