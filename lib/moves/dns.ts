import type { Queryable } from "@/db/client";
import { lowerAccountTtls, restoreRecordTtls } from "@/lib/dns/zone";
import { syncZoneFile } from "@/lib/dns/zone-file-sync";
import { env } from "@/lib/env";
import type { NodeRow } from "@/lib/nodes/hosts";
import { nodeAddress } from "@/lib/nodes/service";
import type { MoveRow } from "./records";

// A move and the resolvers' caches (docs/nodes.md "Moving accounts": what a visitor with a
// cached address sees): when a move is queued, the account's records that name its source get a
// short TTL (MOVE_DNS_TTL); the switch waits until the old TTL has passed since then, so from the
// switch on no cache holds the source's address longer than the short TTL; the source forwards
// the account's sites to the target for twice the longer of the two; when the move ends the
// records get their TTL back.

/** What a queued move records of its lowering: each record's old TTL, and when the caches of the old TTL have run out. */
export interface LoweredTtls {
  recordTtls: Record<string, number>;
  cachesClearAt: Date;
  /** The domains whose zones changed: their files are written once the move's transaction has committed. */
  zones: number[];
}

/** In the queuing transaction: the account's records naming the source's address lowered to MOVE_DNS_TTL. */
export async function lowerMoveTtls(tx: Queryable, accountId: number, source: NodeRow): Promise<LoweredTtls> {
  const address = nodeAddress(source);
  const { lowered, zones } = address ? await lowerAccountTtls(tx, accountId, address, env().moveDnsTtl) : { lowered: {}, zones: [] };
  const longest = Math.max(0, ...Object.values(lowered));
  return { recordTtls: lowered, cachesClearAt: new Date(Date.now() + longest * 1000), zones };
}

/** In the transaction that ends the move (done or cancelled): each lowered record still at the short TTL gets its own back. */
export async function giveBackTtls(tx: Queryable, move: Pick<MoveRow, "recordTtls">): Promise<number[]> {
  return move.recordTtls ? restoreRecordTtls(tx, move.recordTtls, env().moveDnsTtl) : [];
}

/** Until when the source forwards, from the switch: twice the longest TTL a cache may hold the source's address for. */
export function forwardUntil(move: Pick<MoveRow, "recordTtls">, switchedAt: Date): Date {
  const longest = Math.max(env().moveDnsTtl, ...Object.values(move.recordTtls ?? {}));
  return new Date(switchedAt.getTime() + 2 * longest * 1000);
}

/** The zone files of `zones`, after the change committed. */
export async function syncZones(db: Queryable, zones: number[]): Promise<void> {
  for (const domainId of zones) await syncZoneFile(db, domainId);
}
