import { z } from "zod";
import { mailSettingsSchema } from "@/lib/email/schemas";
import { idField, onlyFields, timestamp } from "@/lib/http/operation";
import { isDomainNameShape } from "@/lib/provisioning/rules";
import { moveSchema } from "@/lib/moves/schemas";

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
  max_php_memory_mb: z.number().int().nullable(),
  max_php_upload_mb: z.number().int().nullable(),
  max_cron_jobs: z.number().int().nullable(),
  // Email (docs/email.md): mailboxes, the sum of their quotas (MB), messages sent per hour and per day.
  mailboxes: z.number().int().nullable(),
  mail_quota_mb: z.number().int().nullable(),
  mail_per_hour: z.number().int().nullable(),
  mail_per_day: z.number().int().nullable(),
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
  suspension_reason: z.string().nullable(),
  has_ssh_access: z.boolean(),
  // How the customer reaches their files (docs/files-and-ssh.md "API"): SFTP always, a shell when
  // `shell`.
  ssh: z.object({ host: z.string(), port: z.number().int(), username: z.string(), shell: z.boolean() }),
  // What a mail client needs (docs/email.md "Mail client settings"): IMAP 993 and POP3 995 with
  // TLS, submission on 587 (STARTTLS) and 465 (TLS), at the host the zone's MX names.
  mail_settings: mailSettingsSchema,
  plan: planSchema,
  reseller_id: z.number().int().nullable(),
  // The hosting server it lives on (docs/nodes.md "What the API promises"), and whether that server
  // has done what the panel asked: ok, pending (queued work waits for a node that did not answer),
  // or failed (node_error).
  node: z.string(),
  node_sync: z.enum(["ok", "pending", "failed"]),
  node_error: z.string().nullable(),
  // Its latest move to another node, open or ended (docs/nodes.md "Moving accounts"); null: never moved.
  move: moveSchema.nullable(),
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
  // over_limit: the measured size is above the plan's disk_mb (never true while either is unknown).
  // enforced: the kernel refuses writes past limit_mb (HOME_ROOT's file system has user quotas).
  // measured_at: when used_mb was measured (ISO 8601); a figure is kept up to DISK_USAGE_MAX_AGE_S,
  // so it may be older than the request. Null when used_mb is.
  disk: z.object({
    used_mb: z.number().nullable(),
    limit_mb: z.number().int().nullable(),
    over_limit: z.boolean(),
    enforced: z.boolean(),
    measured_at: z.iso.datetime().nullable(),
  }),
  database_sizes: z
    .array(z.object({ id: z.number().int(), database_name: z.string(), size_mb: z.number() }))
    .nullable(),
  // What is real: databases on MariaDB (MYSQL_PROVISION_URL), sites on a web server (WEB_SERVER).
  provisioning: z.object({ databases: z.boolean(), web: z.boolean() }),
});

/** GoAccess's own JSON report, passed through as GoAccess makes it. */
export const visitorReportSchema = z.record(z.string(), z.unknown());


/**
 * Names the server keeps for itself: an account's username becomes its database prefix and, with
 * system users, its Linux user and group, so it must never be one of these (any existing Linux
 * user or group is refused too, lib/accounts/service.ts). Names with characters a username
 * cannot hold (`www-data`, `_apt`) are refused by the format already.
 */
export const RESERVED_USERNAMES: ReadonlySet<string> = new Set([
  "root", "daemon", "bin", "sys", "sync", "games", "man", "lp", "mail", "news", "uucp", "proxy",
  "backup", "list", "irc", "gnats", "nobody", "messagebus", "sshd", "polkitd",
  "mysql", "mariadb", "postgres", "redis", "nginx", "apache", "httpd", "www", "bind",
  "named", "ftp", "postfix", "dovecot", "exim", "admin", "administrator", "panel", "php",
]);

/**
 * A new account's username: letters and digits. No `_`: the username and `_` are the prefix of
 * the account's database names (`alice_shop`), and with `_` in usernames one account's prefix
 * could lie inside another's (`a_` holds `a_b_`). Accounts made before keep their `_`
 * (lib/databases/service.ts keeps the other accounts out of their prefix).
 */
/** The username rule in words: the schema's refusal ("must …") and the form's hint say it alike. */
export const ACCOUNT_USERNAME_RULE = "start with a letter, then letters or digits only; at most 32 characters";

const accountUsername = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z][a-z0-9]{0,31}$/, `must ${ACCOUNT_USERNAME_RULE}`)
  .refine((username) => !RESERVED_USERNAMES.has(username), "is reserved by the server");

const accountEmail = z.email("is not a valid email address").trim().max(255);

/** Creation of an account (CLI, admin UI, API). `plan` and `reseller` are names; left out: `default`, none. */
export const createAccountSchema = z
  .object({
    username: accountUsername,
    // Checked here as typed too (the service normalises it), so a form says it beside the other fields' errors.
    domain: z.string().trim().min(1, "is required").max(253, "must be at most 253 characters").refine(isDomainNameShape, "is not a valid domain name"),
    plan: z.string().trim().min(1).optional(),
    reseller: z.string().trim().min(1).optional(),
    email: accountEmail.optional(),
    // The node to host it (admins); left out, the active node with the fewest accounts.
    node: z.string().trim().toLowerCase().min(1).optional(),
  })
  .extend(z.object(accountProfileFields).partial().shape);
export type CreateAccountInput = z.input<typeof createAccountSchema>;

/** The admin-only fields of an account (admin UI): plan and reseller by name (`reseller: null` = none), SSH access. */
export const accountAdminFieldsSchema = z.object({
  plan: z.string().trim().min(1, "Choose a plan"),
  reseller: z.string().trim().min(1).nullable(),
  has_ssh_access: z.boolean(),
});
export type AccountAdminFieldsInput = z.input<typeof accountAdminFieldsSchema>;

/**
 * Partial update of an account by its manager (admin UI, PUT /api/admin/accounts/{id}): the
 * admin-only fields, email and profile. A field left out keeps its value.
 */
export const updateAccountAdminSchema = z.object({
  ...accountAdminFieldsSchema.shape,
  email: accountEmail.nullable(),
  ...accountProfileFields,
}).partial();
export type UpdateAccountAdminInput = z.input<typeof updateAccountAdminSchema>;

/** PUT /api/admin/accounts/{id}: name and main domain never change, status through suspend/unsuspend. */
export const updateManagedAccountBodySchema = onlyFields(updateAccountAdminSchema.shape, (field) =>
  field === "username" || field === "domain"
    ? `${field} cannot be changed`
    : field === "status" || field === "is_suspended"
      ? `${field} changes through POST /api/admin/accounts/{id}/suspend and /unsuspend`
      : `${field} is not a field of the hosting account`,
);

/** GET /api/admin/accounts: substring of username, domain or email; status. */
export const listAccountsQuerySchema = z.object({
  search: z.string().trim().max(255).optional(),
  status: z.enum(["active", "suspended"]).optional(),
});

/** POST /api/admin/accounts/{id}/suspend (and the CLI's --reason, the admin UI's field). */
export const suspendAccountBodySchema = z.object({
  reason: z.string().trim().max(255, "must be at most 255 characters").optional(),
});

/** A row of the admin list: the account and its reseller's username. */
export type AccountListRow = HostingAccountRecord & { reseller_username: string | null };
