import { z } from "zod";
import { idField, timestamp } from "@/lib/http/operation";

export const DOMAIN_TYPES = ["domain", "subdomain", "parked"] as const;

/** How a domain's site is served (DESIGN.md "Running applications"). */
export const SITE_PROFILES = ["php", "static", "proxy"] as const;

/** A local port an account's application listens on (the proxy profile): not a privileged port. */
export const proxyPortField = z.number("must be a number").int("must be a whole number").min(1024, "must be 1024 or more").max(65535, "must be at most 65535");

export const createDomainBodySchema = z.object({
  domain: z.string().trim().min(1).max(253),
  domain_type: z.enum(DOMAIN_TYPES),
  domain_path: z.string().trim().max(4096).optional(),
  parent_domain_id: idField.optional(),
  subdomain: z.string().trim().max(63).optional(),
  parked_on_domain_id: idField.optional(),
  site_profile: z.enum(SITE_PROFILES).optional(),
  proxy_port: proxyPortField.nullable().optional(),
});

/** PUT /api/client/domains/{id}: how the site is served. */
export const updateDomainBodySchema = z
  .object({
    site_profile: z.enum(SITE_PROFILES).optional(),
    proxy_port: proxyPortField.nullable().optional(),
  })
  .strict();

export const SSL_STATUSES = ["off", "pending", "active", "failed"] as const;

/**
 * AutoSSL's view of the domain (DESIGN.md "Automatic TLS"): `active` while a certificate covering
 * the name is installed (`expires_at` its expiry), `pending` while AutoSSL is on and one is on
 * its way, `failed` with the reason in `error` (an older certificate may still be served until
 * `expires_at`), `off` without AutoSSL and without a certificate.
 */
export const sslSchema = z.object({
  status: z.enum(SSL_STATUSES),
  expires_at: timestamp.nullable(),
  error: z.string().nullable(),
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
  site_profile: z.enum(SITE_PROFILES),
  proxy_port: z.number().int().nullable(),
  ssl: sslSchema,
  created_at: timestamp,
});

export type SslState = z.infer<typeof sslSchema>;
