import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "@/db/client";
import { phpVersions, resellers } from "@/db/schema";
import { terminateAccount } from "@/lib/accounts/lifecycle";
import { ADMIN } from "@/lib/accounts/manager";
import type { HostingAccountRecord } from "@/lib/accounts/schemas";
import { configurePhp, createAccount, findAccountIdByUsername, getAccount, updateAccountAdminFields } from "@/lib/accounts/service";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { createCronJob } from "@/lib/cron/service";
import { assignDatabase, createDatabase, createDatabaseUser } from "@/lib/databases/service";
import { PRIVILEGES } from "@/lib/provisioning/rules";
import { LOCAL_PART, MAIL_DOMAIN, MAIL_FOLDER, MAX_QUOTA_MB, MAX_TARGETS, PASSWORD_HASH, TARGET_ADDRESS } from "@/lib/provisioning/mail";
import { createAlias, createMailboxWithHash, createMailDomain } from "@/lib/email/service";
import { replaceZoneRecords } from "@/lib/dns/service";
import { DOMAIN_TYPES, SITE_PROFILES } from "@/lib/domains/schemas";
import { createDomain, listDomains, updateDomain } from "@/lib/domains/service";
import { AppError, validationError } from "@/lib/errors";
import { updatePhpSettings } from "@/lib/php-settings/service";
import { databaseServerOf, type Host, hostNamed, hostOfAccount } from "@/lib/nodes/hosts";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { siteFolders } from "@/lib/provisioning/home-layout";
import type { ResticSnapshot } from "@/lib/provisioning/restic";
import { addSshKey } from "@/lib/ssh/service";
import { databaseObjectRecord, notBroughtBack, restoreStep, withRestoreLease } from "./restores";
import { RUN_ID } from "./schemas";
import { accountTag, RECORDS_FORMAT, runsOf, runTag, tagValue } from "./service";

// A whole account back from a restore point after it was terminated (docs/backups.md "A terminated account back"):
// POST /api/admin/backups/restore-account, `panel backup restore USER SNAPSHOT` for a username
// with no account. The run is read from the repository of the node that made it (`node`, the
// panel's own machine when left out), and the account is made again on that node (its files
// and dumps are there). The run's records.json says what the account had; every part is made again
// through the service that makes it for a customer (so the same checks, quotas and server steps
// apply), then the files and the dumps are brought back as any restore brings them
// (lib/backups/restores.ts: files written by the account's user, dumps loaded by a user of
// that database only), holding the new account's restore lease. Any failure terminates what
// was made so far: the account is back whole or not at all.

const nullableString = z.string().nullable().optional();
const id = z.number().int();

/** records.json as the backup service writes it (lib/backups/service.ts accountRecords): only what a restore reads. */
const recordsSchema = z.object({
  format: z.literal(RECORDS_FORMAT),
  plan: z.string(),
  account: z.object({
    username: z.string(),
    domain: z.string(),
    email: nullableString,
    name: nullableString,
    phone: nullableString,
    address: nullableString,
    city: nullableString,
    state: nullableString,
    zip: nullableString,
    country: nullableString,
    company: nullableString,
    isAutoSslEnabled: z.boolean(),
    hasSshAccess: z.boolean(),
    resellerId: id.nullable(),
  }),
  domains: z.array(
    z.object({
      id,
      domain: z.string(),
      domainType: z.enum(DOMAIN_TYPES),
      domainPath: z.string().nullable(),
      parentDomainId: id.nullable(),
      parkedOnDomainId: id.nullable(),
      isPhpFpmEnabled: z.boolean(),
      php_version: z.string().nullable().optional(),
      siteProfile: z.enum(SITE_PROFILES),
      proxySocket: z.string().nullable().optional(),
      // Backups made before the proxy profile used sockets (migration 0016): their port.
      proxyPort: id.nullable().optional(),
    }),
  ),
  dns_records: z.array(
    z.object({
      domainId: id,
      name: z.string(),
      type: z.enum(["SOA", "NS", "A", "AAAA", "CNAME", "MX", "TXT", "SRV"]),
      content: z.string(),
      ttl: id,
      priority: id.nullable(),
      weight: id.nullable(),
      port: id.nullable(),
    }),
  ),
  databases: z.array(z.object({ id, databaseName: z.string() })),
  database_users: z.array(z.object({ id, username: z.string(), password_hash: z.string().nullable().optional() })),
  database_grants: z.array(z.object({ databaseUserId: id, databaseId: id, privileges: z.array(z.enum(PRIVILEGES)) })),
  php_settings: z.array(
    z.object({
      uploadMaxFilesizeMb: id,
      postMaxSizeMb: id,
      memoryLimitMb: id,
      maxExecutionTimeS: id,
      maxInputVars: id,
      displayErrors: z.boolean(),
    }),
  ),
  cron_jobs: z.array(z.object({ schedule: z.string(), command: z.string(), isEnabled: z.boolean() })),
  ssh_keys: z.array(z.object({ name: z.string(), keyType: z.string(), keyData: z.string() })),
  database_objects: z.array(databaseObjectRecord).optional(),
  // Backups made before email kept none. A node's repository is not trusted: the values are read
  // with the renderer's own rules (lib/provisioning/mail.ts) before they become records.
  mail: z
    .object({
      domains: z.array(z.string().regex(MAIL_DOMAIN)),
      mailboxes: z.array(
        z.object({ localPart: z.string().regex(LOCAL_PART), domain: z.string().regex(MAIL_DOMAIN), passwordHash: z.string().regex(PASSWORD_HASH), quotaMb: z.number().int().min(1).max(MAX_QUOTA_MB), enabled: z.boolean() }),
      ),
      aliases: z.array(z.object({ localPart: z.union([z.literal(""), z.string().regex(LOCAL_PART)]), domain: z.string().regex(MAIL_DOMAIN), targets: z.array(z.string().regex(TARGET_ADDRESS)).min(1).max(MAX_TARGETS) })),
    })
    .optional(),
});
type AccountRecords = z.output<typeof recordsSchema>;

/** GET /api/admin/backups/usernames/{username}: the username's restore points in `node`'s repository, of whichever account had it. */
export async function listUsernameRuns(db: Database, username: string, node = LOCAL_NODE) {
  const host = await hostNamed(db, node);
  return { snapshots: runsOf(await host.run("backup.snapshots", { tags: [accountTag(username)] })) };
}

/** The run's snapshots, by part (`part:home`, `part:records`, `db:<name>`). */
async function runSnapshots(host: Host, username: string, run: string): Promise<Map<string, ResticSnapshot>> {
  if (!RUN_ID.test(run)) throw validationError("snapshot", `names no backup of ${username}`);
  const snapshots = await host.run("backup.snapshots", { tags: [accountTag(username), runTag(run)] });
  if (snapshots.length === 0) throw validationError("snapshot", `names no backup of ${username}`);
  const parts = new Map<string, ResticSnapshot>();
  for (const snapshot of snapshots) {
    const database = tagValue(snapshot, "db:");
    const part = database ? `db:${database}` : snapshot.tags?.find((tag) => tag.startsWith("part:"));
    if (part) parts.set(part, snapshot);
  }
  return parts;
}

async function readRecords(host: Host, snapshot: ResticSnapshot | undefined): Promise<AccountRecords> {
  if (!snapshot) throw validationError("snapshot", "holds no records of the account (a backup from before records were kept)");
  const text = await host.run("backup.read-records", { snapshot_id: snapshot.id });
  let parsed;
  try {
    parsed = recordsSchema.safeParse(JSON.parse(text));
  } catch {
    throw validationError("snapshot", "holds records that are not JSON (a damaged backup)");
  }
  if (!parsed.success) throw validationError("snapshot", `holds records this panel cannot read (${parsed.error.issues[0]?.message})`);
  return parsed.data;
}

/**
 * POST /api/admin/backups/restore-account: the account `username` had, as it was at `snapshot`
 * (the newest when left out), made again — Linux user, home, sites, zones, PHP, databases with
 * their users (same passwords) and grants, cron jobs, SSH keys — then its files and databases
 * copied back. The username must be free: an existing account is restored in place
 * (POST /api/admin/accounts/{id}/restore).
 */
export async function restoreTerminatedAccount(
  db: Database,
  actor: Actor,
  input: { username: string; snapshot?: string; node?: string },
  signal?: AbortSignal,
): Promise<HostingAccountRecord & { message: string }> {
  const username = input.username.trim().toLowerCase();
  if ((await findAccountIdByUsername(db, username)) !== null) {
    throw validationError("username", "is an account on this server: restore into it with POST /api/admin/accounts/{id}/restore");
  }
  const node = input.node ?? LOCAL_NODE;
  const host = await hostNamed(db, node);
  const run = input.snapshot ?? (await listUsernameRuns(db, username, node)).snapshots[0]?.id;
  if (!run) throw validationError("username", `has no backups on the node ${node}`);
  const parts = await runSnapshots(host, username, run);
  const records = await readRecords(host, parts.get("part:records"));
  if (records.account.username !== username) throw validationError("snapshot", `holds the records of ${records.account.username}`);

  const created = await createAccount(db, { ...(await accountFields(db, records)), node }, actor);
  let notBack = "";
  try {
    notBack = await withRestoreLease(db, created.id, async () => restoreParts(db, await hostOfAccount(db, created.id), created, records, parts, actor, signal));
    await recordAudit(db, actor, {
      action: "hosting_account.restore",
      targetType: "hosting_account",
      targetId: created.id,
      details: { username, snapshot: run },
    });
  } catch (error) {
    // Nothing half-made: what was restored so far goes again, by the same path as a terminate.
    await terminateAccount(db, ADMIN, created.id, actor).catch((undo) =>
      console.error(`[backups] could not undo the partial restore of ${username}:`, (undo as Error).message),
    );
    throw error;
  }
  const time = parts.get("part:records")!.time;
  return { ...(await getAccount(db, created.id)), message: `${username} restored from the backup of ${time}${notBack}` };
}

/** The create request the account was made with: its plan, reseller (while it exists), contact and profile. */
async function accountFields(db: Database, { account, plan }: AccountRecords) {
  const [reseller] = account.resellerId === null ? [] : await db.select({ username: resellers.username }).from(resellers).where(eq(resellers.id, account.resellerId));
  const profile = Object.fromEntries(
    (["email", "name", "phone", "address", "city", "state", "zip", "country", "company"] as const)
      .filter((field) => account[field] !== null && account[field] !== undefined)
      .map((field) => [field, account[field]!]),
  );
  return { username: account.username, domain: account.domain, plan, reseller: reseller?.username, is_auto_ssl_enabled: account.isAutoSslEnabled, ...profile };
}

/** Every part of the account made again, then its files and dumps; what the answer adds about objects the dumps could not bring back. */
async function restoreParts(
  db: Database,
  host: Host,
  account: HostingAccountRecord,
  records: AccountRecords,
  parts: Map<string, ResticSnapshot>,
  actor: Actor,
  signal?: AbortSignal,
): Promise<string> {
  const accountId = account.id;
  if (records.account.hasSshAccess) await updateAccountAdminFields(db, accountId, { has_ssh_access: true }, actor, ADMIN);

  // Domains in the order they were made (a parent before its subdomains), the main one made with the account.
  const domainIds = new Map<number, number>();
  const [main] = await listDomains(db, accountId);
  for (const domain of records.domains) {
    // A proxied site of an older backup gets the socket migration 0016 gave the others.
    const legacySocket = domain.proxyPort == null ? "app.sock" : `port-${domain.proxyPort}.sock`;
    const proxySocket = domain.proxySocket ?? (domain.siteProfile === "proxy" ? legacySocket : null);
    const profile = { site_profile: domain.siteProfile, proxy_socket: proxySocket };
    if (domain.domain === records.account.domain && domain.domainType === "domain") {
      domainIds.set(domain.id, main.id);
      if (domain.siteProfile !== main.site_profile) await updateDomain(db, accountId, main.id, profile);
      continue;
    }
    const made = await createDomain(db, accountId, {
      domain: domain.domain,
      domain_type: domain.domainType,
      domain_path: domain.domainPath ?? undefined,
      parent_domain_id: domain.parentDomainId === null ? undefined : domainIds.get(domain.parentDomainId),
      parked_on_domain_id: domain.parkedOnDomainId === null ? undefined : domainIds.get(domain.parkedOnDomainId),
      ...profile,
    });
    domainIds.set(domain.id, made.id);
  }
  for (const domain of records.domains) {
    if (!domain.php_version) continue;
    const [php] = await db.select({ id: phpVersions.id }).from(phpVersions).where(eq(phpVersions.version, domain.php_version));
    if (!php) throw new AppError("VALIDATION", `The backup's site ${domain.domain} runs PHP ${domain.php_version}, which this server does not have: add it first (panel php add)`);
    await configurePhp(db, accountId, { domain_id: domainIds.get(domain.id)!, php_version_id: php.id, is_php_fpm_enabled: domain.isPhpFpmEnabled });
  }
  for (const [oldId, newId] of domainIds) {
    await replaceZoneRecords(db, newId, records.dns_records.filter((record) => record.domainId === oldId));
  }

  // Email, after the zones (a mail domain adds its records where the zone has none of the kind):
  // each mail domain gets a new DKIM key that signs at once — the old private key went with the
  // account when it was terminated — then the mailboxes with their passwords, then the aliases.
  const mail = records.mail;
  if (mail) {
    for (const domain of mail.domains) await createMailDomain(db, accountId, { domain });
    for (const mailbox of mail.mailboxes) {
      await createMailboxWithHash(db, accountId, { address: `${mailbox.localPart}@${mailbox.domain}`, passwordHash: mailbox.passwordHash, quota_mb: mailbox.quotaMb, enabled: mailbox.enabled });
    }
    for (const alias of mail.aliases) await createAlias(db, accountId, { address: `${alias.localPart}@${alias.domain}`, targets: alias.targets });
  }

  // Databases, then their users with the passwords they had (the hashes), then the grants.
  const scope = { id: accountId, username: account.username };
  const databaseIds = new Map<number, number>();
  for (const database of records.databases) {
    databaseIds.set(database.id, (await createDatabase(db, scope, { database_name: database.databaseName })).id);
  }
  const userIds = new Map<number, number>();
  const server = await databaseServerOf(db, accountId);
  for (const user of records.database_users) {
    // A random password first: replaced at once by the backup's hash (kept when the backup has none).
    const made = await createDatabaseUser(db, scope, { username: user.username, password: randomBytes(24).toString("base64url") });
    if (user.password_hash) await server?.setPasswordHash(made.username, user.password_hash);
    userIds.set(user.id, made.id);
  }
  for (const grant of records.database_grants) {
    const userId = userIds.get(grant.databaseUserId);
    const databaseId = databaseIds.get(grant.databaseId);
    if (userId && databaseId) await assignDatabase(db, accountId, userId, { database_id: databaseId, privileges: grant.privileges });
  }

  const [settings] = records.php_settings;
  if (settings) {
    await updatePhpSettings(db, accountId, {
      upload_max_filesize_mb: settings.uploadMaxFilesizeMb,
      post_max_size_mb: settings.postMaxSizeMb,
      memory_limit_mb: settings.memoryLimitMb,
      max_execution_time_s: settings.maxExecutionTimeS,
      max_input_vars: settings.maxInputVars,
      display_errors: settings.displayErrors,
    });
  }
  for (const job of records.cron_jobs) await createCronJob(db, accountId, { schedule: job.schedule, command: job.command, is_enabled: job.isEnabled });
  for (const key of records.ssh_keys) await addSshKey(db, accountId, { name: key.name, public_key: `${key.keyType} ${key.keyData}` });

  // The files: every folder a site of the account is served from (the rest of the home is the panel's own).
  const home = parts.get("part:home");
  if (home) {
    for (const folder of siteFolders(records.domains.map((domain) => domain.domainPath))) {
      await restoreStep(signal, (long) => host.run("restore.home-path", { username: account.username, snapshot: home, parts: [folder] }, long));
    }
    // The maildirs (HOME/mail), then Dovecot made to see them: its indexes resynced with the
    // files and each mailbox's quota counted again (docs/email.md "Backups, restores and moves").
    if (mail?.mailboxes.length) {
      await restoreStep(signal, (long) => host.run("restore.home-path", { username: account.username, snapshot: home, parts: [MAIL_FOLDER] }, long));
      const mailboxes = mail.mailboxes.map(({ localPart, domain }) => ({ localPart, domain }));
      await restoreStep(signal, (long) => host.run("mail.resync", { username: account.username, mailboxes }, long));
    }
  }
  let notBack = "";
  for (const { databaseName } of records.databases) {
    const dump = parts.get(`db:${databaseName}`);
    if (!dump) continue;
    const load = await restoreStep(signal, (long) => host.run("restore.dump", { snapshot: dump, database: databaseName, into: databaseName }, long));
    const missing = notBroughtBack(records.database_objects?.filter((object) => object.database === databaseName), load);
    if (missing) notBack += `; ${databaseName}: ${missing}`;
  }
  return notBack;
}
