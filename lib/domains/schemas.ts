import { z } from "zod";
import { idField, timestamp } from "@/lib/http/operation";

export const DOMAIN_TYPES = ["domain", "subdomain", "parked"] as const;

export const createDomainBodySchema = z.object({
  domain: z.string().trim().min(1).max(253),
  domain_type: z.enum(DOMAIN_TYPES),
  domain_path: z.string().trim().max(4096).optional(),
  parent_domain_id: idField.optional(),
  subdomain: z.string().trim().max(63).optional(),
  parked_on_domain_id: idField.optional(),
});

export const domainRecordSchema = z.object({
  id: z.number().int(),
  domain: z.string(),
  domain_type: z.enum(DOMAIN_TYPES),
  domain_path: z.string().nullable(),
  parent_domain_id: z.number().int().nullable(),
  subdomain: z.string().nullable(),
  parked_on_domain_id: z.number().int().nullable(),
  php_version: z.object({ id: z.number().int(), version: z.string() }).nullable(),
  is_php_fpm_enabled: z.boolean(),
  created_at: timestamp,
});
