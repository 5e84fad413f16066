import { and, asc, eq, isNull, lt, ne, or, sql } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { domainCertificates, domains, hostingAccounts, mailDomains, nodes } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { siteNames } from "@/lib/domains/names";
import { mailHostOf } from "@/lib/email/schemas";
import { notFound } from "@/lib/errors";

// AutoSSL's records in the database: which sites exist and what their certificates are, the lock
// one instance takes to issue, and the outcome of each attempt.

export interface SiteToCheck {
  /** The node that serves it (its account's). */
  node: typeof nodes.$inferSelect;
  domainId: number;
  domain: string;
  autoSsl: boolean;
  names: string[];
  row: typeof domainCertificates.$inferSelect | null;
}

/**
 * Every site (domains and subdomains; parked names are on their domain's certificate) with the
 * node that serves it: its certificate is made and kept there (docs/nodes.md "AutoSSL on nodes").
 */
export async function sitesToCheck(db: Queryable): Promise<SiteToCheck[]> {
  const rows = await db
    .select({ domain: domains, autoSsl: hostingAccounts.isAutoSslEnabled, row: domainCertificates, node: nodes })
    .from(domains)
    .innerJoin(hostingAccounts, eq(hostingAccounts.id, domains.accountId))
    .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
    .leftJoin(domainCertificates, eq(domainCertificates.domainId, domains.id))
    .orderBy(asc(domains.id));
  const parked = await db
    .select({ on: domains.parkedOnDomainId, name: domains.domain })
    .from(domains)
    .where(eq(domains.domainType, "parked"));
  const parkedOn = new Map<number, string[]>();
  for (const { on, name } of parked) parkedOn.set(on!, [...(parkedOn.get(on!) ?? []), name]);
  return rows
    .filter(({ domain }) => domain.domainType !== "parked")
    .map(({ domain, autoSsl, row, node }) => ({
      node,
      domainId: domain.id,
      domain: domain.domain,
      autoSsl,
      names: siteNames(domain.domain, domain.domainType, parkedOn.get(domain.id) ?? []),
      row,
    }));
}

/**
 * The mail host names (`mail.<domain>`) of the mail domains each node serves, by node id: a
 * certificate there for one of them is its mail servers' (docs/email.md "TLS"), never an orphan.
 */
export async function mailHostsByNode(db: Queryable): Promise<Map<number, Set<string>>> {
  const rows = await db
    .select({ nodeId: hostingAccounts.nodeId, domain: mailDomains.domain })
    .from(mailDomains)
    .innerJoin(hostingAccounts, eq(hostingAccounts.id, mailDomains.accountId));
  const hosts = new Map<number, Set<string>>();
  for (const { nodeId, domain } of rows) hosts.set(nodeId, (hosts.get(nodeId) ?? new Set()).add(mailHostOf(domain)));
  return hosts;
}

/** How long an instance may hold a site's issuing lock before another may take it over. */
const LEASE = sql`now() + interval '10 minutes'`;

/**
 * Takes the site's issuing lock (a lease on its row, which works the same on PostgreSQL shared by
 * several instances and on single-process PGlite, and never holds a transaction open across the
 * CA's network calls). Returns the row as it is now, or null when another instance holds it.
 */
export async function claimSite(db: Queryable, domainId: number) {
  const [row] = await db
    .insert(domainCertificates)
    .values({ domainId, issuingUntil: LEASE })
    .onConflictDoUpdate({
      target: domainCertificates.domainId,
      set: { issuingUntil: LEASE },
      setWhere: or(isNull(domainCertificates.issuingUntil), lt(domainCertificates.issuingUntil, sql`now()`)),
    })
    .returning();
  return row ?? null;
}

export async function recordIssued(db: Queryable, domainId: number, certificate: { names: string[]; expiresAt: Date }) {
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
    .where(eq(domainCertificates.domainId, domainId));
}

export async function recordFailed(db: Queryable, domainId: number, failure: { error: string; failures: number; nextAttemptAt: Date }) {
  await db
    .update(domainCertificates)
    .set({ status: "failed", ...failure, issuingUntil: null })
    .where(eq(domainCertificates.domainId, domainId));
}

/** The certificate on disk is what the record says (read at every check: the files are the truth). */
export async function recordInstalled(db: Queryable, domainId: number, installed: { names: string[]; expiresAt: Date } | null) {
  await db
    .update(domainCertificates)
    .set(installed ? { names: installed.names, expiresAt: installed.expiresAt } : { names: [], expiresAt: null })
    .where(eq(domainCertificates.domainId, domainId));
}

/**
 * The installed certificate already covers what the site needs (a failing name was removed
 * again): whatever failed before is over.
 */
export async function recordCovered(db: Queryable, domainId: number) {
  await db
    .update(domainCertificates)
    .set({ status: "active", error: null, failures: 0, nextAttemptAt: null })
    .where(and(eq(domainCertificates.domainId, domainId), ne(domainCertificates.status, "active")));
}

export async function releaseSite(db: Queryable, domainId: number) {
  await db.update(domainCertificates).set({ issuingUntil: null }).where(eq(domainCertificates.domainId, domainId));
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
      .values({ domainId: target.id, renewRequested: true })
      .onConflictDoUpdate({
        target: domainCertificates.domainId,
        set: { renewRequested: true, failures: 0, nextAttemptAt: null, status: failedToPending },
      });
    await recordAudit(tx, actor, { action: "domain.ssl_renew", targetType: "domain", targetId: target.id });
    return { domain: target.domain };
  });
}
