import { getDb } from "@/db/client";
import { dnsOperations } from "@/lib/dns/operations";
import { deleteDnsRecord, getDnsRecordOrThrow, updateDnsRecord } from "@/lib/dns/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/dns-records/{id} — one record
export const GET = withApiKey(dnsOperations.get, async ({ account, params }) =>
  getDnsRecordOrThrow(await getDb(), { accountId: account.id, id: params.id }),
);

// PUT /api/client/dns-records/{id} — change a record (not SOA; its domain never changes)
export const PUT = withApiKey(dnsOperations.update, async ({ account, params, body }) =>
  updateDnsRecord(await getDb(), account.id, params.id, body),
);

// DELETE /api/client/dns-records/{id} — delete a record (not SOA)
export const DELETE = withApiKey(dnsOperations.delete, async ({ account, params }) => ({
  message: "DNS record deleted",
  ...(await deleteDnsRecord(await getDb(), account.id, params.id)),
}));
