import { getDb } from "@/db/client";
import { dnsOperations } from "@/lib/dns/operations";
import { createDnsRecord, listDnsRecords } from "@/lib/dns/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/dns-records — records of one of the account's zones (?domain_id=)
export const GET = withApiKey(dnsOperations.list, async ({ account, query }) =>
  listDnsRecords(await getDb(), account.id, query.domain_id),
);

// POST /api/client/dns-records — add a record to one of the account's zones
export const POST = withApiKey(dnsOperations.create, async ({ account, body }) =>
  createDnsRecord(await getDb(), account.id, body),
);
