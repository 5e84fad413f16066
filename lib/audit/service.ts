import type { Queryable } from "@/db/client";
import { auditLog } from "@/db/schema";

/** Who did something: an admin in the web UI, an API key, the command line, or the panel itself. */
export type Actor =
  | { type: "admin_user"; id: number; ip?: string | null }
  | { type: "api_key"; id: number; ip?: string | null }
  | { type: "cli" }
  | { type: "system" };

export interface AuditEntry {
  action: string;
  targetType?: string;
  targetId?: number;
  details?: Record<string, unknown>;
}

/** Records an audit row; pass the transaction of the change so both commit or neither. */
export async function recordAudit(db: Queryable, actor: Actor, entry: AuditEntry): Promise<void> {
  await db.insert(auditLog).values({
    actorType: actor.type,
    actorId: "id" in actor ? actor.id : null,
    ip: "ip" in actor ? (actor.ip ?? null) : null,
    action: entry.action,
    targetType: entry.targetType ?? null,
    targetId: entry.targetId ?? null,
    details: entry.details ?? null,
  });
}
