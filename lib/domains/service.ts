import { and, asc, count, eq, inArray, ne, sql } from "drizzle-orm";
import type { z } from "zod";
import type { Database, Queryable } from "@/db/client";
import { preparedQuery } from "@/db/prepared";
import { domainCertificates, domains, hostingAccounts, nodes, phpVersions } from "@/db/schema";
import { autoSslServes, requestAutoSslCheck } from "@/lib/autossl/job";
import { type CertificateStatusRow, sslState } from "@/lib/autossl/state";
import { assertQuota, lockAccount } from "@/lib/accounts/lock";
import { createZone, nextSerial } from "@/lib/dns/zone";
import { syncZoneFile, type ZoneWarning } from "@/lib/dns/zone-file-sync";
import { applyAccountMailOf, settleMail } from "@/lib/email/service";
import { env } from "@/lib/env";
import { notFound, pgErrorCode, validationError } from "@/lib/errors";
import { proxySocketPath } from "@/lib/provisioning/home-layout";
import { provisionDomain, syncAccountSites } from "@/lib/hosting/service";
import { hostOfAccount } from "@/lib/nodes/hosts";
import { MAX_SOCKET_PATH_BYTES } from "@/lib/provisioning/nginx";
import { removeZoneFile } from "@/lib/provisioning/zone-files";
import { keptNameProblem, normalizeDomainName } from "./names";
import type { createDomainBodySchema, domainRecordSchema, updateDomainBodySchema } from "./schemas";

export interface NewDomain {
  accountId: number;
  /** Already normalised (lib/domains/names.ts). */
  domain: string;
  domainType: "domain" | "subdomain" | "parked";
  domainPath?: string | null;
  parentDomainId?: number | null;
  subdomain?: string | null;
  parkedOnDomainId?: number | null;
  siteProfile?: "php" | "static" | "proxy";
  proxySocket?: string | null;
}

// pg_advisory_xact_lock key held by every domain insert ("domain" in ASCII): the rules below
// compare a new name with every account's names, so two inserts must not check at once.
const DOMAIN_NAMES_LOCK = 0x646f6d61696e;

/**
 * A name inside another account's domain (`mail.bob.example` while bob holds `bob.example`)
 * would be a zone cut into that account's zone, served in its place; a name containing another
 * account's domain (`bob.example` while bob holds `mail.bob.example`) would claim a zone another
 * account already serves part of. Both are refused (cPanel refuses them by default too).
 */
async function assertApartFromOtherAccounts(tx: Queryable, accountId: number, name: string) {
  const labels = name.split(".");
  const parents = labels.slice(1, -1).map((_, i) => labels.slice(i + 1).join("."));
  const [inside] = parents.length
    ? await tx
        .select({ id: domains.id })
        .from(domains)
        .where(and(inArray(domains.domain, parents), ne(domains.accountId, accountId)))
        .limit(1)
    : [];
  if (inside) throw validationError("domain", "is inside a domain of another account on this server");
  const [containing] = await tx
    .select({ id: domains.id })
    .from(domains)
    .where(and(sql`right(${domains.domain}, ${name.length + 1}) = ${`.${name}`}`, ne(domains.accountId, accountId)))
    .limit(1);
  if (containing) throw validationError("domain", "contains a domain of another account on this server");
}

/**
 * Inserts a domain and provisions its zone (SOA, two NS, apex A). Run it inside the caller's
 * transaction: a failure leaves neither. A local name or one of the server's own (lib/domains/
 * names.ts keptNameProblem), a name taken anywhere on the server, or inside or containing another
 * account's domain, is a 422 naming `domain` — checked under a server-wide lock, so it holds
 * under concurrent requests. Every way a domain comes in (account create, domain create, a
 * restored account) passes here.
 */
export async function insertDomainWithZone(tx: Queryable, fields: NewDomain) {
  const kept = keptNameProblem(fields.domain);
  if (kept) throw validationError("domain", kept);
  await tx.execute(sql`select pg_advisory_xact_lock(${DOMAIN_NAMES_LOCK})`);
  await assertApartFromOtherAccounts(tx, fields.accountId, fields.domain);
  try {
    const [domain] = await tx
      .insert(domains)
      .values({ ...fields, soaSerial: nextSerial(0) })
      .returning();
    await createZone(tx, domain);
    return domain;
  } catch (error) {
    if (pgErrorCode(error) === "23505") throw validationError("domain", "is already hosted on this server");
    throw error;
  }
}

export type DomainRecord = z.infer<typeof domainRecordSchema>;

// The columns a Domain record is made of (lib/domains/schemas.ts), and nothing else: the list
// is the API's hot path, and a column not read is neither parsed nor at risk of leaking.
const domainRecordColumns = {
  id: domains.id,
  domain: domains.domain,
  domainType: domains.domainType,
  domainPath: domains.domainPath,
  parentDomainId: domains.parentDomainId,
  subdomain: domains.subdomain,
  parkedOnDomainId: domains.parkedOnDomainId,
  isPhpFpmEnabled: domains.isPhpFpmEnabled,
  siteProfile: domains.siteProfile,
  proxySocket: domains.proxySocket,
  createdAt: domains.createdAt,
};
const certificateStatusColumns = {
  status: domainCertificates.status,
  names: domainCertificates.names,
  expiresAt: domainCertificates.expiresAt,
  error: domainCertificates.error,
};

type DomainRecordRow = Pick<typeof domains.$inferSelect, keyof typeof domainRecordColumns>;

export function toDomainRecord(
  row: DomainRecordRow,
  php: { id: number; version: string } | null,
  certificate: CertificateStatusRow | null,
  autoSsl: boolean,
): DomainRecord {
  return {
    id: row.id,
    domain: row.domain,
    domain_type: row.domainType,
    domain_path: row.domainPath,
    parent_domain_id: row.parentDomainId,
    subdomain: row.subdomain,
    parked_on_domain_id: row.parkedOnDomainId,
    php_version: php,
    is_php_fpm_enabled: row.isPhpFpmEnabled,
    site_profile: row.siteProfile,
    proxy_socket: row.proxySocket,
    ssl: sslState(row.domain, certificate, autoSsl),
    created_at: row.createdAt.toISOString(),
  };
}

// A parked domain's certificate is the one of the domain it is parked on.
function selectDomains(db: Queryable) {
  return db
    .select({
      domain: domainRecordColumns,
      php: { id: phpVersions.id, version: phpVersions.version },
      certificate: certificateStatusColumns,
      autoSsl: hostingAccounts.isAutoSslEnabled,
      node: nodes.name,
    })
    .from(domains)
    .innerJoin(hostingAccounts, eq(hostingAccounts.id, domains.accountId))
    .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
    .leftJoin(phpVersions, eq(phpVersions.id, domains.phpVersionId))
    .leftJoin(
      domainCertificates,
      and(eq(domainCertificates.domainId, sql`coalesce(${domains.parkedOnDomainId}, ${domains.id})`), eq(domainCertificates.kind, "site")),
    );
}

type SelectedDomain = Awaited<ReturnType<typeof selectDomains>>[number];
const recordOf = (row: SelectedDomain) =>
  toDomainRecord(row.domain, row.php, row.certificate, row.autoSsl && autoSslServes(row.node));

const accountDomains = preparedQuery((db) =>
  selectDomains(db)
    .where(eq(domains.accountId, sql.placeholder("accountId")))
    .orderBy(asc(domains.id))
    .prepare("account_domains"),
);

const accountDomain = preparedQuery((db) =>
  selectDomains(db)
    .where(and(eq(domains.accountId, sql.placeholder("accountId")), eq(domains.id, sql.placeholder("id"))))
    .prepare("account_domain"),
);

/** GET /api/client/domains: the account's domains, oldest first. */
export async function listDomains(db: Queryable, accountId: number): Promise<DomainRecord[]> {
  const rows = await accountDomains(db).execute({ accountId });
  return rows.map(recordOf);
}

/** One of the account's domains; another account's is "not found". */
export async function getDomainOrThrow(db: Queryable, { accountId, id }: { accountId: number; id: number }) {
  const [row] = await accountDomain(db).execute({ accountId, id });
  if (!row) throw notFound("Domain");
  return recordOf(row);
}

export type CreateDomainInput = z.output<typeof createDomainBodySchema>;

const DOMAIN_PATH = /^(?!\/)(?!.*(^|\/)\.\.?(\/|$))[A-Za-z0-9._\/-]{1,255}$/;

/** The owned domain a subdomain or parked domain hangs off; missing or foreign → 422 (DESIGN.md). */
async function ownedTarget(tx: Queryable, accountId: number, id: number | undefined, field: string) {
  if (id === undefined) throw validationError(field, "is required for this domain_type");
  const [row] = await tx
    .select({ id: domains.id, domain: domains.domain })
    .from(domains)
    .where(and(eq(domains.id, id), eq(domains.accountId, accountId)));
  if (!row) throw validationError(field, "names no domain of this account");
  return row;
}

/**
 * The full name of a subdomain under `parent`: `domain` when it already ends in the parent,
 * else `<subdomain>.<parent>` when `subdomain` is given, else `<domain>.<parent>` for a single
 * label. Returns the name and its leading part (stored as `subdomain`).
 */
function subdomainName(input: CreateDomainInput, parent: string): { name: string; label: string } {
  const given = normalizeDomainName(input.domain) ?? input.domain.trim().toLowerCase();
  let name: string | null;
  if (given.endsWith(`.${parent}`)) name = given;
  else if (input.subdomain) name = normalizeDomainName(`${input.subdomain}.${parent}`);
  else if (/^[a-z0-9-]+$/.test(given)) name = normalizeDomainName(`${given}.${parent}`);
  else throw validationError("domain", `must be a name under ${parent}, e.g. blog.${parent}`);
  if (!name || name === parent) throw validationError("subdomain", "is not a valid host label");
  return { name, label: name.slice(0, -(parent.length + 1)) };
}

/**
 * POST /api/client/domains: a domain, subdomain or parked domain, with its zone, in one
 * transaction; `warning` says if the zone file could not follow.
 */
export async function createDomain(
  db: Database,
  accountId: number,
  input: CreateDomainInput,
): Promise<DomainRecord & ZoneWarning> {
  if (input.domain_path !== undefined && !DOMAIN_PATH.test(input.domain_path)) {
    throw validationError("domain_path", "must be a relative path inside the home directory (no .. or leading /)");
  }
  if (input.domain_path?.split("/")[0] === "logs") throw validationError("domain_path", "cannot be in logs/, which holds the account's logs: choose another folder");
  const { id: domainId, settleMs } = await db.transaction(async (tx) => {
    const account = await lockAccount(tx, accountId);
    const { plan } = account;
    const [{ total }] = await tx.select({ total: count() }).from(domains).where(eq(domains.accountId, accountId));
    assertQuota(total, plan.maxDomains, "domains");

    let fields: NewDomain;
    if (input.domain_type === "subdomain") {
      const parent = await ownedTarget(tx, accountId, input.parent_domain_id, "parent_domain_id");
      const { name, label } = subdomainName(input, parent.domain);
      fields = {
        accountId,
        domain: name,
        domainType: "subdomain",
        domainPath: input.domain_path ?? `public_html/${name}`,
        parentDomainId: parent.id,
        subdomain: label,
      };
    } else {
      const name = normalizeDomainName(input.domain);
      if (!name) throw validationError("domain", "is not a valid domain name");
      if (input.domain_type === "parked") {
        const target = await ownedTarget(tx, accountId, input.parked_on_domain_id, "parked_on_domain_id");
        fields = { accountId, domain: name, domainType: "parked", domainPath: input.domain_path ?? null, parkedOnDomainId: target.id };
      } else {
        fields = { accountId, domain: name, domainType: "domain", domainPath: input.domain_path ?? `public_html/${name}` };
      }
    }
    const profile = checkedSiteProfile(account.username, { site_profile: input.site_profile ?? "php", proxy_socket: input.proxy_socket ?? null });
    const domain = await insertDomainWithZone(tx, { ...fields, siteProfile: profile.site_profile, proxySocket: profile.proxy_socket });
    await provisionDomain(tx, domain.id);
    // Last step: its PHP may send as the new name (docs/email.md "PHP's mail()"); the web server
    // or the mail tables refusing (422) roll the domain back.
    return { id: domain.id, settleMs: await applyAccountMailOf(tx, accountId) };
  });
  await settleMail(settleMs);
  const zoneWarning = await syncZoneFile(db, domainId);
  // A new site, or a new name on a site's certificate.
  requestAutoSslCheck();
  return { ...(await getDomainOrThrow(db, { accountId, id: domainId })), ...zoneWarning };
}

/**
 * The proxy profile's rule (docs/applications.md "Why a socket, not a port"): the `proxy` profile
 * needs a socket, the others none. The socket is a file in the account's own run/ folder
 * (HOME/run/<name>), which only the account's processes and nginx's workers can enter, and where
 * nginx's workers follow no link (the kernel's fs.protected_symlinks): a proxied site reaches only
 * an application its own account runs, and no account can listen in another's place. Its path must
 * fit a unix socket's.
 */
function checkedSiteProfile(username: string, wanted: { site_profile: "php" | "static" | "proxy"; proxy_socket: string | null }) {
  if (wanted.site_profile !== "proxy") return { site_profile: wanted.site_profile, proxy_socket: null };
  const name = wanted.proxy_socket;
  if (name === null) throw validationError("proxy_socket", "is required with site_profile proxy: the file name of the application's unix socket in the home's run/ folder, e.g. app.sock");
  const length = Buffer.byteLength(proxySocketPath(username, name));
  if (length > MAX_SOCKET_PATH_BYTES) {
    throw validationError("proxy_socket", `is too long: in the home's run/ folder its path would be ${length} bytes, and a unix socket's holds at most ${MAX_SOCKET_PATH_BYTES}`);
  }
  return { site_profile: wanted.site_profile, proxy_socket: name };
}

/** PUT /api/client/domains/{id}: the site's profile; live when answered (the site is rewritten in the transaction). */
export async function updateDomain(
  db: Database,
  accountId: number,
  id: number,
  input: z.output<typeof updateDomainBodySchema>,
): Promise<DomainRecord> {
  await db.transaction(async (tx) => {
    const account = await lockAccount(tx, accountId);
    const [row] = await tx
      .select({ siteProfile: domains.siteProfile, proxySocket: domains.proxySocket })
      .from(domains)
      .where(and(eq(domains.id, id), eq(domains.accountId, accountId)));
    if (!row) throw notFound("Domain");
    const profile = checkedSiteProfile(account.username, {
      site_profile: input.site_profile ?? row.siteProfile,
      proxy_socket: input.proxy_socket === undefined ? row.proxySocket : input.proxy_socket,
    });
    await tx.update(domains).set({ siteProfile: profile.site_profile, proxySocket: profile.proxy_socket }).where(eq(domains.id, id));
    await syncAccountSites(tx, accountId);
  });
  return getDomainOrThrow(db, { accountId, id });
}

/**
 * DELETE /api/client/domains/{id}: the domain, its zone and its site go; its files stay (the
 * customer's data: only termination removes the home). The account's main domain, and a domain
 * with subdomains or parked domains on it, are refused (422).
 */
export async function deleteDomain(db: Database, accountId: number, id: number): Promise<{ message: string }> {
  const name = await db.transaction(async (tx) => {
    const account = await lockAccount(tx, accountId);
    const [row] = await tx
      .select({ domain: domains.domain })
      .from(domains)
      .where(and(eq(domains.id, id), eq(domains.accountId, accountId)));
    if (!row) throw notFound("Domain");
    if (row.domain === account.domain) throw validationError("id", "is the account's main domain");
    try {
      await tx.delete(domains).where(eq(domains.id, id));
    } catch (error) {
      if (pgErrorCode(error) === "23503") throw validationError("id", "has subdomains or parked domains: delete them first");
      throw error;
    }
    await syncAccountSites(tx, accountId, { removedDomains: [row.domain] });
    // Its mail domain, mailboxes and aliases went with it (foreign keys), and its PHP sends as it no more: the mail tables follow.
    await applyAccountMailOf(tx, accountId);
    return row.domain;
  });
  await removeZoneFile(name);
  // Its site is gone: so is its certificate (a parked name leaves its domain's at the next issue).
  await (await hostOfAccount(db, accountId)).run("certificates.remove", { domains: [name] }).catch((error) => {
    // The domain is gone already: a certificate left on a node that did not answer only waits for its expiry.
    console.error(`[domains] the certificate of ${name} was not removed:`, (error as Error).message);
  });
  requestAutoSslCheck();
  return { message: `Domain ${name} deleted; its files remain in the home directory` };
}
