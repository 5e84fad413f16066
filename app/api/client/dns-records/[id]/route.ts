import { notImplemented } from "@/lib/http/with-api-key";
import { dnsOperations } from "@/lib/dns/operations";

// GET /api/client/dns-records/{id} — one record
export const GET = notImplemented(dnsOperations.get);

// PUT /api/client/dns-records/{id} — change a record (not SOA; its domain never changes)
export const PUT = notImplemented(dnsOperations.update);

// DELETE /api/client/dns-records/{id} — delete a record (not SOA)
export const DELETE = notImplemented(dnsOperations.delete);
