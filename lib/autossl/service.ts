import { and, asc, eq, isNull, lt, ne, or, sql } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { domainCertificates, domains, hostingAccounts, mailDomains, nodes } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { siteNames } from "@/lib/domains/names";
import { mailHostOf } from "@/lib/provisioning/rules";
import { notFound } from "@/lib/errors";

// AutoSSL's records in the database: which sites and mail host names exist and what their
// certificates are, the lock one instance takes to issue, and the outcome of each attempt.

/** One certificate's row: a domain's site's, or its mail host name's (db/schema/certificates.ts). */
export interface CertificateKey {
  domainId: number;
  kind: CertificateKind;
}

export type CertificateKind = (typeof domainCertificates.$inferSelect)["kind"];

/** What AutoSSL checks: a site, or the host name `mail.<domain>` of a mail domain (kind "mail"). */
export interface SiteToCheck extends CertificateKey {
  /** The node that serves it (its account's). */
  node: typeof nodes.$inferSelect;
  /** The certificate's first name, and its folder under CERTS_DIR. */
  domain: string;
  autoSsl: boolean;
  names: string[];
  row: typeof domainCertificates.$inferSelect | null;
}

const rowOf = (key: CertificateKey) => and(eq(domainCertificates.domainId, key.domainId), eq(domainCertificates.kind, key.kind));

/**
 * Every site (domains and subdomains; parked names are on their domain's certificate), then every
 * mail domain's host name (mailHostsToCheck), with the node that serves it: its certificate is
 * made and kept there (docs/nodes.md "AutoSSL on nodes").
 */
export async function sitesToCheck(db: Queryable): Promise<SiteToCheck[]> {
  const rows = await db
    .select({ domain: domains, autoSsl: hostingAccounts.isAutoSslEnabled, row: domainCertificates, node: nodes })
    .from(domains)
    .innerJoin(hostingAccounts, eq(hostingAccounts.id, domains.accountId))
    .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
    .leftJoin(domainCertificates, and(eq(domainCertificates.domainId, domains.id), eq(domainCertificates.kind, "site")))
    .orderBy(asc(domains.id));
  const parked = await db
    .select({ on: domains.parkedOnDomainId, name: domains.domain })
    .from(domains)
    .where(eq(domains.domainType, "parked"));
  const parkedOn = new Map<number, string[]>();
  for (const { on, name } of parked) parkedOn.set(on!, [...(parkedOn.get(on!) ?? []), name]);
  const sites = rows
    .filter(({ domain }) => domain.domainType !== "parked")
    .map(({ domain, autoSsl, row, node }) => ({
      node,
      domainId: domain.id,
      kind: "site" as const,
      domain: domain.domain,
      autoSsl,
      names: siteNames(domain.domain, domain.domainType, parkedOn.get(domain.id) ?? []),
      row,
    }));
  return [...sites, ...(await mailHostsToCheck(db, new Set(rows.map(({ domain }) => domain.domain))))];
}

/**
 * The host name of each mail domain, `mail.<domain>`, as a certificate of its own (a failure there
 * never holds up the site's), its HTTP-01 challenge answered by the domain's site, whose
 * server_name carries it (lib/hosting/service.ts). Not when a domain of that name exists
 * (`domainNames`): its site's certificate is the one, in the same folder.
 */
async function mailHostsToCheck(db: Queryable, domainNames: ReadonlySet<string>): Promise<SiteToCheck[]> {
  const rows = await db
    .select({ domainId: mailDomains.domainId, domain: mailDomains.domain, autoSsl: hostingAccounts.isAutoSslEnabled, row: domainCertificates, node: nodes })
    .from(mailDomains)
    .innerJoin(hostingAccounts, eq(hostingAccounts.id, mailDomains.accountId))
    .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
    .leftJoin(domainCertificates, and(eq(domainCertificates.domainId, mailDomains.domainId), eq(domainCertificates.kind, "mail")))
    .orderBy(asc(mailDomains.domainId));
  return rows
    .map(({ domainId, domain, autoSsl, row, node }) => ({ node, domainId, kind: "mail" as const, domain: mailHostOf(domain), autoSsl, names: [mailHostOf(domain)], row }))
    .filter((host) => !domainNames.has(host.domain));
}

/** How long an instance may hold a site's issuing lock before another may take it over. */
const LEASE = sql`now() + interval '10 minutes'`;

/**
 * Takes the site's issuing lock (a lease on its row, which works the same on PostgreSQL shared by
 * several instances and on single-process PGlite, and never holds a transaction open across the
 * CA's network calls). Returns the row as it is now, or null when another instance holds it.
 */
export async function claimSite(db: Queryable, key: CertificateKey) {
  const [row] = await db
    .insert(domainCertificates)
    .values({ domainId: key.domainId, kind: key.kind, issuingUntil: LEASE })
    .onConflictDoUpdate({
      target: [domainCertificates.domainId, domainCertificates.kind],
      set: { issuingUntil: LEASE },
      setWhere: or(isNull(domainCertificates.issuingUntil), lt(domainCertificates.issuingUntil, sql`now()`)),
    })
    .returning();
  return row ?? null;
}

export async function recordIssued(db: Queryable, key: CertificateKey, certificate: { names: string[]; expiresAt: Date }) {
  await db
    .update(domainCertificates)
    .set({
      status: "active",
      names: certificate.names,
      expiresAt: certificate.expiresAt,
      error: null,
      failures: 0,
      nextAttemptAt: null,
      renewRequested: false,
      issuingUntil: null,
    })
    .where(rowOf(key));
}

export async function recordFailed(db: Queryable, key: CertificateKey, failure: { error: string; failures: number; nextAttemptAt: Date }) {
  await db
    .update(domainCertificates)
    .set({ status: "failed", ...failure, issuingUntil: null })
    .where(rowOf(key));
}

/** The certificate on disk is what the record says (read at every check: the files are the truth). */
export async function recordInstalled(db: Queryable, key: CertificateKey, installed: { names: string[]; expiresAt: Date } | null) {
  await db
    .update(domainCertificates)
    .set(installed ? { names: installed.names, expiresAt: installed.expiresAt } : { names: [], expiresAt: null })
    .where(rowOf(key));
}

/**
 * The installed certificate already covers what the site needs (a failing name was removed
 * again): whatever failed before is over.
 */
export async function recordCovered(db: Queryable, key: CertificateKey) {
  await db
    .update(domainCertificates)
    .set({ status: "active", error: null, failures: 0, nextAttemptAt: null })
    .where(and(rowOf(key), ne(domainCertificates.status, "active")));
}

export async function releaseSite(db: Queryable, key: CertificateKey) {
  await db.update(domainCertificates).set({ issuingUntil: null }).where(rowOf(key));
}

/**
 * "Renew now" (admin): issue again at the next check even though the certificate is valid, and
 * forget the back-off (an admin asking is not the job hammering the CA). A parked domain renews
 * the certificate of the domain it is parked on.
 */
export async function requestRenewal(db: Database, accountId: number, domainId: number, actor: Actor): Promise<{ domain: string }> {
  return db.transaction(async (tx) => {
    const [target] = await tx
      .select({ id: sql<number>`coalesce(${domains.parkedOnDomainId}, ${domains.id})`.mapWith(Number), domain: domains.domain })
      .from(domains)
      .where(and(eq(domains.id, domainId), eq(domains.accountId, accountId)));
    if (!target) throw notFound("Domain");
    const failedToPending = sql`case when ${domainCertificates.status} = 'failed' then 'pending'::ssl_status else ${domainCertificates.status} end`;
    await tx
      .insert(domainCertificates)
      .values({ domainId: target.id, kind: "site", renewRequested: true })
      .onConflictDoUpdate({
        target: [domainCertificates.domainId, domainCertificates.kind],
        set: { renewRequested: true, failures: 0, nextAttemptAt: null, status: failedToPending },
      });
    await recordAudit(tx, actor, { action: "domain.ssl_renew", targetType: "domain", targetId: target.id });
    return { domain: target.domain };
  });
}
