import { and, desc, eq, inArray } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { auditLog, hostingAccounts } from "@/db/schema";
import { type ListPage, type ListQuery, listQuerySchema } from "@/lib/list-query";
import { LOCAL_NODE } from "@/lib/nodes/schemas";

// The accounts that were terminated, for the accounts list's Terminated filter: their records are
// gone, so they are read from the audit log (each termination's row names the username and, since
// it records it, the node whose repository holds its backups). A username terminated twice is
// listed once, at its last termination; one that is an account again (restored, or taken by a new
// account) is not listed.

export interface TerminatedAccount {
  username: string;
  terminated_at: string;
  /** The node it was on, whose repository holds its backups (`local` for terminations recorded before the node was). */
  node: string;
}

export async function listTerminatedAccounts(db: Queryable, query: ListQuery): Promise<ListPage<TerminatedAccount>> {
  const { search, page, per_page: perPage } = listQuerySchema.parse(query);
  const rows = await db
    .select({ at: auditLog.at, details: auditLog.details })
    .from(auditLog)
    .where(and(eq(auditLog.action, "hosting_account.terminate"), eq(auditLog.targetType, "hosting_account")))
    .orderBy(desc(auditLog.at));
  const latest = new Map<string, TerminatedAccount>();
  for (const row of rows) {
    const username = typeof row.details?.username === "string" ? row.details.username : null;
    if (!username || latest.has(username)) continue;
    latest.set(username, {
      username,
      terminated_at: row.at.toISOString(),
      node: typeof row.details?.node === "string" ? row.details.node : LOCAL_NODE,
    });
  }
  const names = [...latest.keys()];
  const existing = names.length
    ? new Set((await db.select({ username: hostingAccounts.username }).from(hostingAccounts).where(inArray(hostingAccounts.username, names))).map((row) => row.username))
    : new Set<string>();
  const needle = search.toLowerCase();
  const found = [...latest.values()].filter((account) => !existing.has(account.username) && account.username.includes(needle));
  const start = (page - 1) * perPage;
  return { rows: perPage === 0 ? found : found.slice(start, start + perPage), total: found.length };
}
