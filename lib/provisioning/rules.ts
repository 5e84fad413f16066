// The values and rules the renderers check that the request schemas share (docs/nodes.md "How it
// works": a rule a renderer checks lives with the renderer, and the services import it from here,
// so a node's agent carries it without the services). Plain values only, no Node.js module: the
// admin pages' forms check the same rules in the browser.

/** MySQL privilege names a database user may be granted (DESIGN.md "Records"); mysql.ts grants no other. */
export const PRIVILEGES = [
  "ALL PRIVILEGES",
  "ALTER",
  "ALTER ROUTINE",
  "CREATE",
  "CREATE ROUTINE",
  "CREATE TEMPORARY TABLES",
  "CREATE VIEW",
  "DELETE",
  "DROP",
  "EVENT",
  "EXECUTE",
  "INDEX",
  "INSERT",
  "LOCK TABLES",
  "REFERENCES",
  "SELECT",
  "SHOW VIEW",
  "TRIGGER",
  "UPDATE",
] as const;
export type Privilege = (typeof PRIVILEGES)[number];

/** The SSH public key types a keys file may hold (openssh.ts writes no other). */
export const SSH_KEY_TYPES = ["ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-rsa"] as const;
export type SshKeyType = (typeof SSH_KEY_TYPES)[number];

/** An account's PHP settings, as php-fpm.ts writes them into its pools. */
export interface PhpSettings {
  upload_max_filesize_mb: number;
  post_max_size_mb: number;
  memory_limit_mb: number;
  max_execution_time_s: number;
  max_input_vars: number;
  display_errors: boolean;
}

/** The server's own maxima of the PHP settings (php-fpm.ts refuses more); a plan may set lower ones. */
export const PHP_SETTING_MAXIMA = {
  upload_max_filesize_mb: 2048,
  post_max_size_mb: 2048,
  memory_limit_mb: 4096,
  max_execution_time_s: 3600,
  max_input_vars: 100_000,
} as const;

// Cron schedules as Debian's cron reads them: five fields (minute, hour, day of month, month,
// day of week) of numbers, `*`, ranges `a-b`, lists `a,b` and steps `/n`, or one of the
// shorthands. Checked field by field against each field's range, so a schedule the panel
// accepts is one cron runs (and nothing else ever reaches a crontab line).

export const SCHEDULE_SHORTHANDS = ["@hourly", "@daily", "@weekly", "@monthly", "@yearly"] as const;

const FIELDS = [
  { name: "minute", min: 0, max: 59 },
  { name: "hour", min: 0, max: 23 },
  { name: "day of month", min: 1, max: 31 },
  { name: "month", min: 1, max: 12 },
  { name: "day of week", min: 0, max: 7 },
] as const;

const ITEM = /^(\*|(\d{1,2})(?:-(\d{1,2}))?)(?:\/(\d{1,2}))?$/;

/** Why `schedule` is not one cron runs, or null when it is. */
export function scheduleProblem(schedule: string): string | null {
  if ((SCHEDULE_SHORTHANDS as readonly string[]).includes(schedule)) return null;
  const fields = schedule.split(" ");
  if (fields.length !== 5) return `must be five fields ("*/5 * * * *") or one of ${SCHEDULE_SHORTHANDS.join(", ")}`;
  for (const [index, field] of fields.entries()) {
    const { name, min, max } = FIELDS[index];
    for (const item of field.split(",")) {
      const match = ITEM.exec(item);
      if (!match) return `has a ${name} field cron cannot read: "${field}"`;
      const [, , from, to, step] = match;
      const numbers = [from, to].filter((value) => value !== undefined).map(Number);
      if (numbers.some((value) => value < min || value > max)) return `has a ${name} outside ${min}–${max}: "${field}"`;
      if (numbers.length === 2 && numbers[0] > numbers[1]) return `has a ${name} range that runs backwards: "${field}"`;
      if (step !== undefined && (Number(step) < 1 || Number(step) > max)) return `has a ${name} step outside 1–${max}: "${field}"`;
    }
  }
  return null;
}

/**
 * The database servers' own schemas, and the panel's own schema on each server (its marks and the
 * node it serves, mysql.ts): never a customer's database, never created, dropped, granted, dumped
 * or loaded into by the panel — refused by name wherever a database name reaches the server.
 */
export const PANEL_DATABASE = "hosting-panel";
const SYSTEM_DATABASES = new Set(["mysql", "information_schema", "performance_schema", "sys", PANEL_DATABASE]);

/** Whether `name` is one of the server's own schemas (or the panel's), whatever its case. */
export const isSystemDatabase = (name: string) => SYSTEM_DATABASES.has(name.toLowerCase());

// ---- Email (./mail.ts checks each again where it becomes a line of a table) ----

/**
 * A local part the panel creates: lower-case letters, digits and inner `. _ -`, no `..`, at most
 * 64. Nothing Postfix or Dovecot would read otherwise: no `+` (a recipient delimiter), `@` `%` `!`
 * (routing), `/` (a path in the maildir's name), `:` (the passwd-file's separator), quotes,
 * spaces, `#`, `=` or `,` (a map's syntax).
 */
export const LOCAL_PART = /^(?!.*\.\.)[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$/;
/** A mail domain: lower-case ASCII labels (the panel's domains are stored so). */
export const MAIL_DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
/**
 * Where an alias sends mail, here or elsewhere: a local part of letters, digits and `. _ + = -`
 * (others' addresses may carry a `+tag`), `@`, a domain. No space, comma or quote: one item of a
 * map's value.
 */
export const TARGET_ADDRESS = /^(?!.*\.\.)[a-z0-9](?:[a-z0-9._+=-]{0,62}[a-z0-9_+=-])?@(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
export const MAX_TARGETS = 50;
export const MAX_QUOTA_MB = 1_000_000;

/**
 * The account's PHP login's msmtp configuration, in its home (root's: no web root, no link the
 * customer can plant); PHP-FPM's sendmail_path names it (docs/email.md "PHP's mail()").
 */
export const PHP_MAIL_CONFIG = ".msmtprc";
/** The program PHP's mail() runs (Debian's msmtp). */
export const MSMTP_BINARY = "/usr/bin/msmtp";

/** A DKIM selector the panel makes (a DNS label: `<selector>._domainkey.<domain>`, and a key file's name). */
export const DKIM_SELECTOR = /^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Whether an ASCII host name (lower case, no final dot) is one the panel stores: two or more
 * labels of letters, digits and inner dashes, at most 253 characters, a top-level label not all
 * digits. lib/domains/names.ts normalizeDomainName applies it after converting IDN labels to
 * punycode; a form checks the name as typed with it (`isDomainNameShape`).
 */
export function isAsciiHostName(ascii: string): boolean {
  if (!ascii || ascii.length > 253) return false;
  const labels = ascii.split(".");
  if (labels.length < 2) return false;
  if (!labels.every((label) => /^(?!-)[a-z0-9-]{1,63}(?<!-)$/.test(label))) return false;
  return !/^[0-9]+$/.test(labels[labels.length - 1]);
}

/**
 * A domain as typed in a form, checked where no punycode converter is at hand (the browser, a
 * schema): the rule of isAsciiHostName for an ASCII name; a name with other letters (an IDN) is
 * left to the server, which converts it first. So a form says a bad name beside its other errors.
 */
export function isDomainNameShape(input: string): boolean {
  const trimmed = input.trim().replace(/\.$/, "");
  if (!trimmed || /[\s/:@]/.test(trimmed)) return false;
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(trimmed)) return true;
  return isAsciiHostName(trimmed.toLowerCase());
}

/** The host a mail domain's MX names, whose A record the panel adds and whose certificate mail clients are shown: mail.<domain>. */
export const mailHostOf = (domain: string) => `mail.${domain}`;
