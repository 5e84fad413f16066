import { z } from "zod";
import { idField, onlyFields, timestamp } from "@/lib/http/operation";

const profileString = z.string().trim().max(255).nullable();

/** The fields a client may change (PUT /api/client/account). */
export const accountProfileFields = {
  name: profileString,
  phone: profileString,
  address: profileString,
  city: profileString,
  state: profileString,
  zip: profileString,
  country: profileString,
  company: profileString,
  is_auto_ssl_enabled: z.boolean(),
};

/** Admin-only fields: naming one in a client update is a 422 naming it. */
export const restrictedAccountFields = [
  "plan",
  "plan_id",
  "has_ssh_access",
  "reseller_id",
  "username",
  "domain",
  "status",
  "is_suspended",
] as const;

const restricted = new Set<string>(restrictedAccountFields);

/** PUT /api/client/account: profile fields only; any other field is a 422 naming it. */
export const updateAccountProfileSchema = onlyFields(accountProfileFields, (field) =>
  restricted.has(field)
    ? `${field} can only be changed by an administrator`
    : `${field} is not a field of the hosting account`,
);

export const planSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  max_databases: z.number().int().nullable(),
  max_database_users: z.number().int().nullable(),
  max_domains: z.number().int().nullable(),
  max_dns_records: z.number().int().nullable(),
  disk_mb: z.number().int().nullable(),
});

export const hostingAccountSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  domain: z.string(),
  email: z.string().nullable(),
  name: z.string().nullable(),
  phone: z.string().nullable(),
  address: z.string().nullable(),
  city: z.string().nullable(),
  state: z.string().nullable(),
  zip: z.string().nullable(),
  country: z.string().nullable(),
  company: z.string().nullable(),
  is_auto_ssl_enabled: z.boolean(),
  status: z.enum(["active", "suspended"]),
  is_suspended: z.boolean(),
  has_ssh_access: z.boolean(),
  plan: planSchema,
  reseller_id: z.number().int().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type HostingAccountRecord = z.infer<typeof hostingAccountSchema>;

export const configurePhpBodySchema = z.object({
  domain_id: idField,
  php_version_id: idField,
  is_php_fpm_enabled: z.boolean().optional(),
});

export const visitorStatsQuerySchema = z.object({
  domain: z.string().trim().min(1).max(253).optional(),
});

const usageItem = z.object({ used: z.number().int(), limit: z.number().int().nullable() });

export const usageDetailsSchema = z.object({
  domains: usageItem,
  databases: usageItem,
  database_users: usageItem,
  dns_records: usageItem,
  disk: z.object({ used_mb: z.number().nullable(), limit_mb: z.number().int().nullable() }),
  database_sizes: z
    .array(z.object({ id: z.number().int(), database_name: z.string(), size_mb: z.number() }))
    .nullable(),
  provisioning: z.object({ databases: z.boolean() }),
});

/** GoAccess's own JSON report, passed through as GoAccess makes it. */
export const visitorReportSchema = z.record(z.string(), z.unknown());


/** Admin creation of an account (CLI, admin UI). */
export const createAccountSchema = z.object({
  username: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z][a-z0-9_]{0,31}$/, "must start with a letter; letters, digits and _ only; at most 32"),
  domain: z.string().trim().min(1).max(253),
  plan: z.string().trim().min(1).optional(),
  reseller: z.string().trim().min(1).optional(),
  email: z.email().trim().max(255).optional(),
});
export type CreateAccountInput = z.input<typeof createAccountSchema>;
