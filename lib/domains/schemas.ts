import { z } from "zod";
import { idField, timestamp } from "@/lib/http/operation";

export const DOMAIN_TYPES = ["domain", "subdomain", "parked"] as const;

/** How a domain's site is served (DESIGN.md "Running applications"). */
export const SITE_PROFILES = ["php", "static", "proxy"] as const;

/**
 * The proxy profile's unix socket: a file name in the home's run/ folder (HOME/run/<name>), where
 * the account's application listens (docs/applications.md "Site profiles").
 */
export const proxySocketField = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "must be a file name in the home's run/ folder: letters, digits, . _ - (at most 64; not first . or -), e.g. app.sock");

/**
 * proxy_port, which this version no longer takes: any local port could be named (another
 * account's application, an internal service), and any account could bind a port while its
 * owner's application was down. Accepted as a name only to say so where a client sends one (null,
 * "no port", is let through).
 */
const retiredProxyPortField = z
  .never({ error: "is no longer supported: a proxied site reaches a unix socket in the home's run/ folder; send proxy_socket (e.g. app.sock) and listen on run/app.sock" })
  .nullable()
  .optional()
  .meta({ deprecated: true, description: "Removed: use proxy_socket. Any value but null is refused (422)." });

export const createDomainBodySchema = z.object({
  domain: z.string().trim().min(1).max(253),
  domain_type: z.enum(DOMAIN_TYPES),
  domain_path: z.string().trim().max(4096).optional(),
  parent_domain_id: idField.optional(),
  subdomain: z.string().trim().max(63).optional(),
  parked_on_domain_id: idField.optional(),
  site_profile: z.enum(SITE_PROFILES).optional(),
  proxy_socket: proxySocketField.nullable().optional(),
  proxy_port: retiredProxyPortField,
});

/** PUT /api/client/domains/{id}: how the site is served. */
export const updateDomainBodySchema = z
  .object({
    site_profile: z.enum(SITE_PROFILES).optional(),
    proxy_socket: proxySocketField.nullable().optional(),
    proxy_port: retiredProxyPortField,
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
  /** The proxy profile's socket, a file name in the home's run/ folder; null for the other profiles. */
  proxy_socket: z.string().nullable(),
  ssl: sslSchema,
  created_at: timestamp,
});

export type SslState = z.infer<typeof sslSchema>;
