import { sql } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { AGENT_VERSION } from "@/lib/agent/protocol";
import type { AccountBackupStatus } from "@/lib/backups/schemas";
import { env } from "@/lib/env";
import { readHostFigures } from "@/lib/provisioning/host-figures";
import { LOCAL_NODE } from "./schemas";
import { listNodes, type NodeRecord } from "./service";

// The dashboard's fleet: every node with its figures, and what needs the admin now. The panel's
// own machine (`local`) sends no heartbeat: its figures are read here, as a node's agent reads
// its own (lib/provisioning/host-figures.ts).

/** Why a mail-flagged account needs the admin (lifted by POST /api/admin/accounts/{id}/mail/unflag). */
export const MAIL_FLAG_ERROR = "Its mail went over the plan's sending limits; look at it, then lift the flag";

/** A node's home disk is trouble above this share used. */
export const DISK_FULL_RATIO = 0.9;
/** A failed backup counts as "last night's" within this long (a day and a half: one run a day). */
export const RECENT_FAILURE_MS = 36 * 3600_000;

/**
 * An account whose last piece of work on its node failed (its `node_sync` is `failed`), or whose
 * machine refused its mail for its sending limits (docs/email.md "Sending limits") until an admin
 * lifts the flag.
 */
export interface FlaggedAccount {
  account_id: number;
  username: string;
  /** node_sync: its node's work failed; mail_limits: its mail went over the sending limits. */
  reason: "node_sync" | "mail_limits";
  error: string | null;
}

export type Attention =
  | { kind: "node_unreachable"; node: NodeRecord }
  | { kind: "node_not_joined"; node: NodeRecord }
  | { kind: "node_outdated"; node: NodeRecord }
  | { kind: "disk_full"; node: NodeRecord; ratio: number }
  | { kind: "backup_failed"; account: AccountBackupStatus }
  | { kind: "account_flagged"; account: FlaggedAccount };

export const diskRatio = (disk: NodeRecord["disk"]) => (disk && disk.total_bytes > 0 ? disk.used_bytes / disk.total_bytes : null);

/** What needs the admin now, worst first: nodes down or behind, full disks, last night's failed backups, accounts flagged. */
export function needsAttention(nodes: NodeRecord[], backups: AccountBackupStatus[], flagged: FlaggedAccount[], now = Date.now()): Attention[] {
  const items: Attention[] = [];
  for (const node of nodes) {
    if (node.state === "unreachable") items.push({ kind: node.enrolled ? "node_unreachable" : "node_not_joined", node });
    if (node.state === "outdated") items.push({ kind: "node_outdated", node });
  }
  for (const node of nodes) {
    const ratio = diskRatio(node.disk);
    if (ratio !== null && ratio > DISK_FULL_RATIO) items.push({ kind: "disk_full", node, ratio });
  }
  for (const account of backups) {
    const failedAt = account.last_failure_at ? Date.parse(account.last_failure_at) : null;
    if (account.last_error !== null && failedAt !== null && now - failedAt <= RECENT_FAILURE_MS) items.push({ kind: "backup_failed", account });
  }
  for (const account of flagged) items.push({ kind: "account_flagged", account });
  return items;
}

/**
 * Accounts whose newest finished node job failed and that have none pending (lib/nodes/dispatch.ts
 * nodeSyncOf, for all accounts at once), then accounts flagged for their sending limits.
 */
export async function flaggedAccounts(db: Queryable): Promise<FlaggedAccount[]> {
  const result = await db.execute(sql`
    SELECT a.id AS account_id, a.username, 'node_sync' AS reason, j.error
    FROM hosting_accounts a
    JOIN LATERAL (
      SELECT state, error FROM node_jobs WHERE account_id = a.id AND state <> 'pending' ORDER BY id DESC LIMIT 1
    ) j ON true
    WHERE j.state = 'failed' AND NOT EXISTS (SELECT 1 FROM node_jobs p WHERE p.account_id = a.id AND p.state = 'pending')
    UNION ALL
    SELECT a.id AS account_id, a.username, 'mail_limits' AS reason, ${MAIL_FLAG_ERROR}::text AS error
    FROM hosting_accounts a WHERE a.mail_flagged_at IS NOT NULL
    ORDER BY username, reason`);
  const rows = (Array.isArray(result) ? result : (result as { rows: Record<string, unknown>[] }).rows) as Record<string, unknown>[];
  return rows.map((row) => ({
    account_id: Number(row.account_id),
    username: String(row.username),
    reason: row.reason === "mail_limits" ? "mail_limits" : "node_sync",
    error: row.error === null ? null : String(row.error),
  }));
}

/** Every node, `local` with the figures of this machine and the panel's own agent version. */
export async function fleetNodes(db: Queryable): Promise<NodeRecord[]> {
  const [{ nodes }, local] = await Promise.all([listNodes(db), readHostFigures(env().homeRoot)]);
  return nodes.map((node) => (node.name === LOCAL_NODE ? { ...node, disk: local.disk, load: local.load, agent_version: AGENT_VERSION } : node));
}
