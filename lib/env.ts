import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { parseCidrList } from "@/lib/net/address";

// Every setting of the panel, read from the environment once. A bad value stops the start
// with a message naming the variable (see docs/configuration.md "Configuration").

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const optionalString = z
  .string()
  .trim()
  .optional()
  .transform((value) => (value ? value : null));

const envSchema = z.object({
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  DATABASE_URL: optionalString.refine(
    (url) => url === null || /^postgres(ql)?:\/\//.test(url),
    "must be a postgres:// or postgresql:// URL",
  ),
  DATA_DIR: z.string().trim().min(1).default("./data"),
  PUBLIC_URL: optionalString.refine(
    (url) => url === null || URL.canParse(url),
    "must be an absolute URL such as https://panel.example.com",
  ),
  AUTH_SECRET: optionalString.refine(
    (secret) => secret === null || secret.length >= 32,
    "must be at least 32 characters",
  ),
  TRUSTED_PROXIES: z
    .string()
    .default("")
    .transform((value, ctx) => {
      try {
        return parseCidrList(value);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    }),
  MYSQL_PROVISION_URL: optionalString.refine(
    (url) => url === null || /^mysql:\/\//.test(url),
    "must be a mysql:// URL",
  ),
  MYSQL_USER_HOST: z.string().trim().min(1).max(255).default("%"),
  ZONES_DIR: optionalString,
  ZONE_RELOAD_COMMAND: optionalString,
  ACCESS_LOG_DIR: optionalString,
  LOGROTATE_CONFIG_FILE: optionalString,
  DNS_NAMESERVERS: optionalString,
  SERVER_IPV4: optionalString.refine((ip) => ip === null || net.isIPv4(ip), "must be an IPv4 address"),
  HOME_ROOT: optionalString,
  SYSTEM_USERS: z
    .enum(["0", "1"])
    .default("0")
    .transform((value) => value === "1"),
  WEB_SERVER: z.enum(["nginx"]).optional(),
  WEB_SERVER_GROUP: z.string().trim().regex(/^[a-z_][a-z0-9_-]*$/, "must be a group name").default("www-data"),
  // The user nginx's workers run as: a member of each account's group (it enters the homes).
  WEB_SERVER_USER: z.string().trim().regex(/^[a-z_][a-z0-9_-]*$/, "must be a user name").default("www-data"),
  NGINX_SITES_DIR: optionalString,
  NGINX_TEST_COMMAND: z.string().trim().min(1).default("nginx -t"),
  NGINX_RELOAD_COMMAND: z.string().trim().min(1).default("nginx -s reload"),
  // The master's pid: after a reload the panel waits for workers with the new configuration.
  NGINX_PID_FILE: z.string().trim().min(1).default("/run/nginx.pid"),
  WEB_HTTP_PORT: z.coerce.number().int().min(1).max(65535).default(80),
  WEB_HTTPS_PORT: z.coerce.number().int().min(1).max(65535).default(443),
  PHP_FPM_POOL_DIR: z.string().trim().min(1).default("/etc/php/{version}/fpm/pool.d"),
  PHP_FPM_SOCKET_DIR: z.string().trim().min(1).default("/run/php"),
  PHP_FPM_BINARY: z.string().trim().min(1).default("/usr/sbin/php-fpm{version}"),
  PHP_FPM_RELOAD_COMMAND: optionalString,
  CERTS_DIR: optionalString,
  // HTTP-01 tokens, read by nginx's workers: outside DATA_DIR (docs/web-hosting.md "HTTPS").
  ACME_CHALLENGE_DIR: z.string().trim().min(1).default("/var/lib/hosting-panel/acme-challenge"),
  // Backups by restic (docs/backups.md "Backups").
  BACKUP_REPOSITORY: optionalString,
  BACKUP_PASSWORD_FILE: optionalString,
  BACKUP_SCHEDULE: z
    .string()
    .trim()
    .regex(/^(off|([01][0-9]|2[0-3]):[0-5][0-9])$/, 'must be "off" or a time of day, HH:MM')
    .default("02:00"),
  BACKUP_KEEP_DAILY: positiveInt(7),
  BACKUP_KEEP_WEEKLY: positiveInt(4),
  BACKUP_KEEP_MONTHLY: positiveInt(6),
  BACKUP_KEEP_LAST: z.coerce.number().int().min(0).default(0),
  RESTIC_BINARY: z.string().trim().min(1).default("restic"),
  // Customer file access (docs/files-and-ssh.md "Files and SSH"): OpenSSH configured by the panel.
  SSH_SERVER: z.enum(["openssh"]).optional(),
  SSHD_CONFIG_FILE: z.string().trim().min(1).default("/etc/ssh/sshd_config.d/panel.conf"),
  SSHD_TEST_COMMAND: z.string().trim().min(1).default("sshd -t"),
  SSHD_RELOAD_COMMAND: z.string().trim().min(1).default("pkill -HUP -F /run/sshd.pid"),
  SSH_KEYS_DIR: z.string().trim().min(1).default("/etc/ssh/panel-keys"),
  SSH_HOST: optionalString,
  SSH_PORT: z.coerce.number().int().min(1).max(65535).default(22),
  SFTP_GROUP: z.string().trim().regex(/^[a-z_][a-z0-9_-]*$/, "must be a group name").default("panel-sftp"),
  SHELL_GROUP: z.string().trim().regex(/^[a-z_][a-z0-9_-]*$/, "must be a group name").default("panel-shell"),
  DISK_USAGE_MAX_AGE_S: positiveInt(60),
  // Email (docs/email.md): Postfix's tables and Dovecot's passwd-file written from the panel's records.
  MAIL_SERVER: z
    .enum(["0", "1"])
    .default("0")
    .transform((value) => value === "1"),
  MAIL_MAPS_DIR: z.string().trim().min(1).default("/etc/hosting-panel/mail"),
  MAIL_POSTMAP_COMMAND: z.string().trim().min(1).default("postmap"),
  MAIL_RELOAD_COMMAND: z.string().trim().default("postfix reload"),
  // Ends a mailbox's open IMAP and POP3 sessions, run with its address after `--` once it may log in no more.
  MAIL_KICK_COMMAND: z.string().trim().default("doveadm kick"),
  // Dovecot's doveadm (its words, then the subcommand): each mailbox's quota (`quota get`), and
  // after a restore `force-resync` and `quota recalc` (docs/email.md "Quota").
  MAIL_DOVEADM_COMMAND: z.string().trim().min(1).default("doveadm"),
  MAIL_DOVECOT_GROUP: z.string().trim().regex(/^[a-z_][a-z0-9_-]*$/, "must be a group name").default("dovecot"),
  // rspamd's workers run as this group and read the DKIM keys (MAIL_MAPS_DIR/dkim, docs/email.md "DKIM").
  MAIL_DKIM_GROUP: z.string().trim().regex(/^[a-z_][a-z0-9_-]*$/, "must be a group name").default("_rspamd"),
  // Sending limits (docs/email.md "Sending limits"): the policy service Postfix's submission services ask.
  MAIL_POLICY_SOCKET: z.string().trim().min(1).default("/var/spool/postfix/private/hosting-panel-policy"),
  // The submission port of this machine that PHP's mail() (msmtp) sends through, on 127.0.0.1.
  MAIL_SUBMISSION_PORT: z.coerce.number().int().min(1).max(65535).default(587),
  // The port every hosting machine's Postfix receives mail on: a move's source relays the
  // account's mail to the target's (docs/email.md "Moves").
  MAIL_SMTP_PORT: z.coerce.number().int().min(1).max(65535).default(25),
  ACME_DIRECTORY_URL: optionalString.refine(
    (url) => url === null || /^https:\/\//.test(url),
    "must be an https:// URL of an ACME directory",
  ),
  ACME_EMAIL: optionalString.refine((email) => email === null || /^[^\s@]+@[^\s@]+$/.test(email), "must be an email address"),
  ACME_CA_BUNDLE: optionalString.refine((file) => file === null || fs.existsSync(file), "must be a readable PEM file"),
  ACME_RENEW_BEFORE_DAYS: positiveInt(30),
  // Many servers (docs/nodes.md "Three machines, step by step"): NATS with JetStream carries each
  // node's jobs. Unset: the panel is its own single node, `local`.
  // TLS by default: a nats:// URL (cleartext: the jobs carry passwords) needs NATS_INSECURE=1.
  NATS_URL: optionalString.refine((url) => url === null || /^(nats|tls):\/\/[^\s]+$/.test(url), "must be a tls:// URL (nats:// only with NATS_INSECURE=1)"),
  // The CA that signed the NATS server's certificate (docs/nodes.md "Three machines, step by step"); unset: the system's.
  NATS_CA_FILE: optionalString.refine((file) => file === null || fs.existsSync(file), "must be a readable PEM file"),
  NATS_INSECURE: z
    .enum(["0", "1"])
    .default("0")
    .transform((value) => value === "1"),
  NATS_SEED_FILE: optionalString,
  NATS_AUTH_FILE: optionalString,
  NATS_RELOAD_COMMAND: optionalString,
  // How long a change waits for its node before answering 503 (suspend, unsuspend, terminate: 202).
  NODE_JOB_TIMEOUT_S: positiveInt(15),
  // Where moves keep their snapshots (docs/nodes.md "Moving accounts"): a restic repository location
  // every node reaches (a path on a shared mount, sftp:…, s3:…); each move makes its own under it.
  MOVE_REPOSITORY: optionalString,
  // The TTL a move gives the account's address records while it runs (docs/nodes.md "Moving
  // accounts"): within the zone's limits, 60..86400 s.
  MOVE_DNS_TTL: z.coerce.number().int().min(60, "must be at least 60 (a record's lowest TTL)").max(86400, "must be at most 86400").default(60),
  // What the source's sites answer during a move's final pass (docs/nodes.md "Moving accounts"):
  // reads (GET and HEAD) as before and 503 to the rest, or 503 to every request.
  MOVE_FINAL_PASS_SITES: z.enum(["read-only", "suspended"]).default("read-only"),
  METRICS_INTERVAL_S: positiveInt(60),
  METRICS_RETENTION_DAYS: positiveInt(30),
  // Every admin must set up two-factor sign-in: until they have, their session reaches only the set-up page.
  ADMIN_2FA_REQUIRED: z
    .enum(["0", "1"])
    .default("0")
    .transform((value) => value === "1"),
  // Bench-only routes (/api/bench/*): never enabled unless `npm run bench` asks for them.
  PANEL_BENCH_ROUTES: z
    .enum(["0", "1"])
    .default("0")
    .transform((value) => value === "1"),
  // Full zod check of every API response beside the copy that is sent (lib/http/response-shape.ts):
  // on in test servers and outside production.
  PANEL_CHECK_RESPONSES: z.enum(["0", "1"]).optional(),
});

export type Env = ReturnType<typeof loadEnv>;

/** Every variable the panel reads (the configuration file may set only these: lib/env-file.ts). */
export const settingNames: readonly string[] = Object.keys(envSchema.shape);

export class ConfigError extends Error {}

function loadEnv(source: NodeJS.ProcessEnv) {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const raw = parsed.data;
  if (raw.NATS_URL?.startsWith("nats://") && !raw.NATS_INSECURE) {
    throw new ConfigError(
      "Invalid configuration:\n  NATS_URL: nats:// carries the nodes' jobs (passwords among them) in cleartext: use tls:// (docs/nodes.md \"Three machines, step by step\"), or set NATS_INSECURE=1 to accept that",
    );
  }
  if (raw.MAIL_SERVER && !raw.SYSTEM_USERS) {
    throw new ConfigError("Invalid configuration:\n  MAIL_SERVER: needs SYSTEM_USERS=1 (Dovecot delivers into each account's home as its Linux user)");
  }
  if (raw.SSH_SERVER && !raw.SYSTEM_USERS) {
    throw new ConfigError("Invalid configuration:\n  SSH_SERVER: needs SYSTEM_USERS=1 (SFTP and SSH log in as the account's Linux user)");
  }
  const publicUrl = (raw.PUBLIC_URL ?? `http://localhost:${raw.PORT}`).replace(/\/+$/, "");
  const dataDir = path.resolve(/* turbopackIgnore: true */ raw.DATA_DIR);
  const config = {
    port: raw.PORT,
    databaseUrl: raw.DATABASE_URL,
    dataDir,
    publicUrl,
    authSecret: raw.AUTH_SECRET,
    trustedProxies: raw.TRUSTED_PROXIES,
    mysqlProvisionUrl: raw.MYSQL_PROVISION_URL,
    mysqlUserHost: raw.MYSQL_USER_HOST,
    zonesDir: path.resolve(/* turbopackIgnore: true */ raw.ZONES_DIR ?? path.join(dataDir, "zones")),
    zoneReloadCommand: raw.ZONE_RELOAD_COMMAND,
    accessLogDir: path.resolve(/* turbopackIgnore: true */ raw.ACCESS_LOG_DIR ?? path.join(dataDir, "logs")),
    logrotateConfigFile: path.resolve(/* turbopackIgnore: true */ raw.LOGROTATE_CONFIG_FILE ?? path.join(dataDir, "logrotate.conf")),
    nameservers: parseNameservers(raw.DNS_NAMESERVERS, publicUrl),
    serverIpv4: raw.SERVER_IPV4 ?? primaryIpv4(),
    homeRoot: path.resolve(/* turbopackIgnore: true */ raw.HOME_ROOT ?? path.join(dataDir, "home")),
    systemUsers: raw.SYSTEM_USERS,
    webServer: raw.WEB_SERVER ?? null,
    webServerGroup: raw.WEB_SERVER_GROUP,
    webServerUser: raw.WEB_SERVER_USER,
    nginxSitesDir: path.resolve(/* turbopackIgnore: true */ raw.NGINX_SITES_DIR ?? path.join(dataDir, "nginx")),
    nginxTestCommand: raw.NGINX_TEST_COMMAND,
    nginxReloadCommand: raw.NGINX_RELOAD_COMMAND,
    nginxPidFile: path.resolve(/* turbopackIgnore: true */ raw.NGINX_PID_FILE),
    webHttpPort: raw.WEB_HTTP_PORT,
    webHttpsPort: raw.WEB_HTTPS_PORT,
    // HTTP-01 challenges: the ACME job writes tokens here, every server block serves them.
    acmeChallengeDir: path.resolve(/* turbopackIgnore: true */ raw.ACME_CHALLENGE_DIR),
    certsDir: path.resolve(/* turbopackIgnore: true */ raw.CERTS_DIR ?? path.join(dataDir, "certs")),
    phpFpmPoolDir: raw.PHP_FPM_POOL_DIR,
    phpFpmSocketDir: path.resolve(/* turbopackIgnore: true */ raw.PHP_FPM_SOCKET_DIR),
    phpFpmBinary: raw.PHP_FPM_BINARY,
    phpFpmReloadCommand: raw.PHP_FPM_RELOAD_COMMAND,
    ssh: raw.SSH_SERVER
      ? {
          configFile: path.resolve(/* turbopackIgnore: true */ raw.SSHD_CONFIG_FILE),
          testCommand: raw.SSHD_TEST_COMMAND,
          reloadCommand: raw.SSHD_RELOAD_COMMAND,
          keysDir: path.resolve(/* turbopackIgnore: true */ raw.SSH_KEYS_DIR),
          sftpGroup: raw.SFTP_GROUP,
          shellGroup: raw.SHELL_GROUP,
        }
      : null,
    backup: {
      repository: raw.BACKUP_REPOSITORY ?? path.join(dataDir, "backups"),
      passwordFile: path.resolve(/* turbopackIgnore: true */ raw.BACKUP_PASSWORD_FILE ?? path.join(dataDir, "backup-password")),
      schedule: raw.BACKUP_SCHEDULE === "off" ? null : raw.BACKUP_SCHEDULE,
      keep: { last: raw.BACKUP_KEEP_LAST, daily: raw.BACKUP_KEEP_DAILY, weekly: raw.BACKUP_KEEP_WEEKLY, monthly: raw.BACKUP_KEEP_MONTHLY },
      restic: raw.RESTIC_BINARY,
    },
    // What clients are told to connect to (GET /api/client/account `ssh`).
    sshHost: raw.SSH_HOST ?? new URL(publicUrl).hostname,
    sshPort: raw.SSH_PORT,
    diskUsageMaxAgeMs: raw.DISK_USAGE_MAX_AGE_S * 1000,
    mail: raw.MAIL_SERVER
      ? {
          mapsDir: path.resolve(/* turbopackIgnore: true */ raw.MAIL_MAPS_DIR),
          postmapCommand: raw.MAIL_POSTMAP_COMMAND,
          reloadCommand: raw.MAIL_RELOAD_COMMAND || null,
          kickCommand: raw.MAIL_KICK_COMMAND || null,
          doveadmCommand: raw.MAIL_DOVEADM_COMMAND,
          dovecotGroup: raw.MAIL_DOVECOT_GROUP,
          dkimGroup: raw.MAIL_DKIM_GROUP,
          policySocket: path.resolve(/* turbopackIgnore: true */ raw.MAIL_POLICY_SOCKET),
          submissionPort: raw.MAIL_SUBMISSION_PORT,
          smtpPort: raw.MAIL_SMTP_PORT,
        }
      : null,
    acme: raw.ACME_DIRECTORY_URL
      ? {
          directoryUrl: raw.ACME_DIRECTORY_URL,
          email: raw.ACME_EMAIL,
          caBundlePath: raw.ACME_CA_BUNDLE ? path.resolve(/* turbopackIgnore: true */ raw.ACME_CA_BUNDLE) : null,
          renewBeforeDays: raw.ACME_RENEW_BEFORE_DAYS,
        }
      : null,
    nats: raw.NATS_URL
      ? {
          url: raw.NATS_URL,
          caFile: raw.NATS_CA_FILE ? path.resolve(/* turbopackIgnore: true */ raw.NATS_CA_FILE) : null,
          // nats:// accepted (NATS_INSECURE=1): said at every start.
          insecure: raw.NATS_URL.startsWith("nats://"),
          // The panel's NKEY seed, made on first start (0600); a node's is its own (`panel node join`).
          seedFile: path.resolve(/* turbopackIgnore: true */ raw.NATS_SEED_FILE ?? path.join(dataDir, "nats-panel.nk")),
          authFile: raw.NATS_AUTH_FILE ? path.resolve(/* turbopackIgnore: true */ raw.NATS_AUTH_FILE) : null,
          reloadCommand: raw.NATS_RELOAD_COMMAND,
        }
      : null,
    // On a node: its agent may use a nats:// URL its join did not accept (an agent enrolled before TLS was the default).
    natsInsecure: raw.NATS_INSECURE,
    nodeJobTimeoutMs: raw.NODE_JOB_TIMEOUT_S * 1000,
    moveRepository: raw.MOVE_REPOSITORY,
    moveDnsTtl: raw.MOVE_DNS_TTL,
    moveFinalPassSites: raw.MOVE_FINAL_PASS_SITES,
    metricsIntervalS: raw.METRICS_INTERVAL_S,
    metricsRetentionDays: raw.METRICS_RETENTION_DAYS,
    admin2faRequired: raw.ADMIN_2FA_REQUIRED,
    benchRoutes: raw.PANEL_BENCH_ROUTES,
    checkResponses: (raw.PANEL_CHECK_RESPONSES ?? (source.NODE_ENV === "production" ? "0" : "1")) === "1",
  };
  assertOutsideDataDir(config);
  return config;
}

/** `file` as the kernel finds it: links in the part that exists resolved, the rest appended. */
function realPath(file: string): string {
  try {
    return fs.realpathSync.native(file);
  } catch {
    const parent = path.dirname(file);
    return parent === file ? file : path.join(/* turbopackIgnore: true */ realPath(parent), path.basename(file));
  }
}

/** Whether `file` is `dir` or lies below it, as the kernel resolves both. */
export function liesWithin(file: string, dir: string): boolean {
  const [inner, outer] = [realPath(file), realPath(dir)];
  return inner === outer || inner.startsWith(`${outer}/`);
}

/**
 * DATA_DIR is the panel's alone, 0700 (lib/data-dir.ts): what another program must reach cannot
 * lie inside it — the homes (the accounts' processes, nginx's workers, sshd's chroot), the ACME
 * challenges and the PHP-FPM sockets (nginx's workers), the keys files (sshd reads them as the
 * account's user). Each only when it is used. (A name server running as its own user needs
 * ZONES_DIR outside too, but ZONE_RELOAD_COMMAND may as well be a root's copy elsewhere:
 * docs/configuration.md "Configuration".)
 */
function assertOutsideDataDir(config: {
  dataDir: string;
  homeRoot: string;
  systemUsers: boolean;
  webServer: string | null;
  acmeChallengeDir: string;
  phpFpmSocketDir: string;
  ssh: { keysDir: string } | null;
  mail: { mapsDir: string; policySocket: string } | null;
}): void {
  const homes = config.webServer !== null || config.systemUsers;
  const shared: [name: string, value: string, used: boolean, reader: string][] = [
    ["HOME_ROOT", config.homeRoot, homes, "the accounts' processes and nginx's workers enter the homes; set it outside, e.g. HOME_ROOT=/home (homes an older version kept there are moved first: README \"Security\")"],
    ["ACME_CHALLENGE_DIR", config.acmeChallengeDir, config.webServer !== null, "nginx's workers read the challenges"],
    ["PHP_FPM_SOCKET_DIR", config.phpFpmSocketDir, config.webServer !== null, "nginx's workers connect to the sockets"],
    ["SSH_KEYS_DIR", config.ssh?.keysDir ?? "", config.ssh !== null, "sshd reads each keys file as the account's user"],
    ["MAIL_MAPS_DIR", config.mail?.mapsDir ?? "", config.mail !== null, "Postfix and Dovecot (as its own user) read the mail tables"],
    ["MAIL_POLICY_SOCKET", config.mail?.policySocket ?? "", config.mail !== null, "Postfix (as its own user) connects to the sending limits' policy service"],
  ];
  const problems = shared
    .filter(([, value, used]) => used && liesWithin(value, config.dataDir))
    .map(([name, value, , reader]) => `  ${name}: ${value} lies inside DATA_DIR (${config.dataDir}), which is the panel's alone (0700): ${reader}`);
  if (problems.length) throw new ConfigError(`Invalid configuration:\n${problems.join("\n")}`);
}

/** Two name servers for new zones: DNS_NAMESERVERS, else ns1/ns2 of the panel's host name. */
function parseNameservers(value: string | null, publicUrl: string): [string, string] {
  if (value) {
    const names = value.split(/[\s,]+/).filter(Boolean).map((name) => name.toLowerCase().replace(/\.$/, ""));
    if (names.length !== 2 || !names.every((name) => /^([a-z0-9-]+\.)+[a-z0-9-]+$/.test(name))) {
      throw new ConfigError("Invalid configuration:\n  DNS_NAMESERVERS: must be two host names, e.g. ns1.example.com,ns2.example.com");
    }
    return [names[0], names[1]];
  }
  const host = new URL(publicUrl).hostname;
  const base = host.includes(".") && net.isIP(host) === 0 ? host : "localhost";
  return [`ns1.${base}`, `ns2.${base}`];
}

/** The address new zones point their apex at: SERVER_IPV4, else the first external IPv4. */
function primaryIpv4(): string {
  for (const addresses of Object.values(os.networkInterfaces())) {
    const external = addresses?.find((address) => address.family === "IPv4" && !address.internal);
    if (external) return external.address;
  }
  return "127.0.0.1";
}

const globalForEnv = globalThis as unknown as { __panelEnv?: Env };

/** The validated configuration of this process (parsed on first use, then cached). */
export function env(): Env {
  return (globalForEnv.__panelEnv ??= loadEnv(process.env));
}
