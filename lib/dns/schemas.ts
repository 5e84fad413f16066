import { z } from "zod";
import { idField, onlyFields, timestamp } from "@/lib/http/operation";

/** Types a client may create; SOA is listed but managed by the panel (creating one → 403). */
export const EDITABLE_RECORD_TYPES = ["A", "AAAA", "CNAME", "MX", "TXT", "SRV", "NS"] as const;
const recordType = z.enum(["SOA", ...EDITABLE_RECORD_TYPES]);
/**
 * `type` in a create or update body: SPEC.md's seven types. SOA gets past parsing only so the
 * service can answer it 403 (DESIGN.md); the OpenAPI document lists what a client may send.
 */
const requestRecordType = z
  .enum(["SOA", ...EDITABLE_RECORD_TYPES], { message: `must be one of ${EDITABLE_RECORD_TYPES.join(", ")}` })
  .meta({ enum: [...EDITABLE_RECORD_TYPES], description: "SOA records are the panel's: sending SOA is answered 403" });

const ttl = z.number().int().min(60).max(86400);
const port16 = z.number().int().min(0).max(65535);

export const dnsListQuerySchema = z.object({
  domain_id: z
    .string()
    .regex(/^[1-9][0-9]{0,9}$/, "must be a positive integer")
    .transform(Number),
});

export const createDnsRecordBodySchema = z.object({
  domain_id: idField,
  name: z.string().trim().min(1).max(253),
  type: requestRecordType,
  content: z.string().trim().min(1).max(4096),
  ttl,
  priority: port16.optional(),
  weight: port16.optional(),
  port: port16.optional(),
});

/** PUT: every field optional; `domain_id` is refused (a record never leaves its zone). */
export const updateDnsRecordBodySchema = onlyFields(createDnsRecordBodySchema.omit({ domain_id: true }).shape, (field) =>
  field === "domain_id" ? "cannot be changed: a record stays in its zone" : `${field} is not a field of a DNS record`,
);

export const dnsRecordSchema = z.object({
  id: z.number().int(),
  domain_id: z.number().int(),
  name: z.string(),
  type: recordType,
  content: z.string(),
  ttl: z.number().int(),
  priority: z.number().int().nullable(),
  weight: z.number().int().nullable(),
  port: z.number().int().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

/** Set when a change is saved but its zone file could not be written or ZONE_RELOAD_COMMAND failed. */
export const zoneWarningField = {
  warning: z
    .string()
    .optional()
    .describe("Present only when the change is saved but the zone file could not be written or reloaded"),
};

/** The answer of a record's create or update: the record, and a `warning` if its zone file failed. */
export const dnsRecordChangeSchema = dnsRecordSchema.extend(zoneWarningField);
