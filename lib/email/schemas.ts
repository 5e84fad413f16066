import { z } from "zod";
import { sslSchema } from "@/lib/domains/schemas";
import { onlyFields, timestamp } from "@/lib/http/operation";
import { LOCAL_PART, MAX_QUOTA_MB, MAX_TARGETS, TARGET_ADDRESS } from "@/lib/provisioning/rules";

// Email of an account (DESIGN.md "Email", docs/email.md): mail domains, mailboxes, aliases. The
// rules of a local part and of a target are the renderer's (lib/provisioning/mail.ts), checked
// again there before they become a line of a table.

const LOCAL_PART_RULE = "may hold only a-z, 0-9 and . _ - (not first or last, no ..), at most 64 characters before the @";

/** An address as given: trimmed, lower case. */
const addressText = z.string("must be a string").trim().toLowerCase().min(1, "is required").max(254, "must be at most 254 characters");

/** local@domain with a local part the mail servers read as it is; the domain is the service's to check. */
export const mailboxAddress = addressText.superRefine((value, ctx) => {
  const at = value.lastIndexOf("@");
  if (at <= 0 || at === value.length - 1) return void ctx.addIssue({ code: "custom", message: "must be an address such as name@example.com" });
  if (!LOCAL_PART.test(value.slice(0, at))) ctx.addIssue({ code: "custom", message: LOCAL_PART_RULE });
});

/** An alias's address: local@domain, or @domain for the domain's catch-all. */
const aliasAddress = addressText.superRefine((value, ctx) => {
  const at = value.lastIndexOf("@");
  if (at < 0 || at === value.length - 1) return void ctx.addIssue({ code: "custom", message: "must be an address such as name@example.com, or @example.com for a catch-all" });
  if (at > 0 && !LOCAL_PART.test(value.slice(0, at))) ctx.addIssue({ code: "custom", message: LOCAL_PART_RULE });
});

const password = z.string("must be a string").min(10, "must be at least 10 characters").max(1024, "must be at most 1024 characters");
const quotaMb = z.number("must be a number").int("must be a whole number").min(1, "must be at least 1").max(MAX_QUOTA_MB, `must be at most ${MAX_QUOTA_MB}`);

export const createMailDomainBodySchema = z.object({ domain: z.string("must be a string").trim().toLowerCase().min(1, "is required").max(253).transform((value) => value.replace(/\.$/, "")) }).strict();

export const createMailboxBodySchema = z.object({ address: mailboxAddress, password, quota_mb: quotaMb, enabled: z.boolean().default(true) }).strict();

/** PUT: a field left out keeps its value; the address is the mailbox's for good. */
export const updateMailboxBodySchema = onlyFields({ password, quota_mb: quotaMb, enabled: z.boolean() }, (field) =>
  field === "address" ? "address cannot be changed: create another mailbox" : `${field} is not a field of a mailbox`,
);

const target = z
  .string("must be a string")
  .trim()
  .toLowerCase()
  .refine((value) => TARGET_ADDRESS.test(value), "must be an address such as name@example.com (letters, digits and . _ + = - before the @)");

export const createAliasBodySchema = z
  .object({
    address: aliasAddress,
    targets: z
      .array(target, "must be a list of addresses")
      .min(1, "must name at least one address")
      .max(MAX_TARGETS, `may name at most ${MAX_TARGETS} addresses`)
      .transform((targets) => [...new Set(targets)]),
  })
  .strict();

const dnsCheck = z.object({
  name: z.string().nullable(),
  type: z.string(),
  expected: z.string().nullable(),
  // What the panel's zone of the domain holds at that name and type (docs/email.md "DNS").
  found: z.array(z.string()),
  // no_key: DKIM only (the account's machine serves no mail, or a domain from before DKIM: rotate makes its first key).
  status: z.enum(["ok", "missing", "different", "no_key"]),
});

const dkimKey = z.object({
  selector: z.string(),
  // published: in the zone, not signing yet; signing; retired: signs no more, still in the zone until unpublished_after.
  state: z.enum(["published", "signing", "retired"]),
  created_at: timestamp,
  retired_at: timestamp.nullable(),
  unpublished_after: timestamp.nullable(),
});

export const mailDomainRecordSchema = z.object({
  id: z.number().int(),
  domain: z.string(),
  domain_id: z.number().int(),
  dns: z.object({ mx: dnsCheck, spf: dnsCheck, dkim: dnsCheck, dmarc: dnsCheck }),
  // The selector its mail is signed with (null: none), and every key still in its zone.
  dkim: z.object({ selector: z.string().nullable(), keys: z.array(dkimKey) }),
  // The certificate of its host name, mail.<domain>, that mail clients are shown (docs/email.md
  // "TLS"): as a domain's `ssl`, for that name.
  ssl: sslSchema,
  created_at: timestamp,
});
export type MailDomainRecord = z.infer<typeof mailDomainRecordSchema>;

export const mailboxRecordSchema = z.object({
  id: z.number().int(),
  address: z.string(),
  quota_mb: z.number().int(),
  used_mb: z.number(),
  enabled: z.boolean(),
  created_at: timestamp,
});
export type MailboxRecord = z.infer<typeof mailboxRecordSchema>;

export const aliasRecordSchema = z.object({ id: z.number().int(), address: z.string(), targets: z.array(z.string()) });
export type AliasRecord = z.infer<typeof aliasRecordSchema>;

// What a customer types into a mail client (the account's `mail_settings`, lib/email/settings.ts).

export const mailSettingsSchema = z.object({
  imap: z.object({ host: z.string(), port: z.literal(993), tls: z.boolean() }),
  pop3: z.object({ host: z.string(), port: z.literal(995), tls: z.boolean() }),
  smtp: z.object({ host: z.string(), ports: z.tuple([z.literal(587), z.literal(465)]) }),
});
export type MailSettings = z.infer<typeof mailSettingsSchema>;


// The account's outgoing mail as an admin sees it (GET /api/admin/accounts/{id} `mail`, docs/email.md
// "Sending limits"): flagged when its machine refused a message for its limits, until an admin
// lifts it; the counts its machine keeps (recipients in the last 60 minutes and the last 24 hours;
// null when the machine did not answer); the plan's limits (null: unlimited).
export const accountMailSendingSchema = z.object({
  flagged: z.boolean(),
  flagged_at: timestamp.nullable(),
  sent_last_hour: z.number().int().nullable(),
  sent_today: z.number().int().nullable(),
  limits: z.object({ per_hour: z.number().int().nullable(), per_day: z.number().int().nullable() }),
});
export type AccountMailSending = z.infer<typeof accountMailSendingSchema>;
