import type { z } from "zod";
import { createDnsRecordBodySchema } from "@/lib/dns/schemas";

/** A record's Edit page: every field of a new record but its zone, which never changes (PUT /api/client/dns-records/{id}). */
export const dnsRecordEditFormSchema = createDnsRecordBodySchema.omit({ domain_id: true });
export type DnsRecordEditFormInput = z.input<typeof dnsRecordEditFormSchema>;
export type DnsRecordCreateFormInput = z.input<typeof createDnsRecordBodySchema>;
