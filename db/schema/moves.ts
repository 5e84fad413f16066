import { sql } from "drizzle-orm";
import { index, integer, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { hostingAccounts } from "./accounts";
import { createdAt, updatedAt } from "./columns";
import { nodes } from "./nodes";

// Accounts moving between nodes (docs/nodes.md "Moving accounts"): each row is a move's state
// machine, advanced by lib/moves/driver.ts one step at a time, so the panel, either agent or NATS
// can stop at any step and the move goes on from where it was.
//
//   queued     waits for the moves before it from the same node (a drain moves one at a time)
//   preparing  the target gets the account, suspended (its sites answer "suspended", no logins)
//   copying    a first snapshot of the home and databases on the source, restored on the target
//   switching  the source suspended, a final snapshot restored on the target, then — in one
//              transaction — the account's node and its zones' A records become the target's
//   cleaning   the account's files, sites, users and databases removed from the source; the
//              source's nginx forwards the account's domains to the target instead
//   forwarding the source forwards until forward_until (twice the records' old TTL), then the
//              forward goes
//   done
//   cancelling the target's copy removed (a cancel, or a move that failed before its switch)
//   cancelled  the source never stopped serving; nothing of the account is left on the target
//
// Until the switch commits the source holds the truth; from then on the target does.

export const moveState = pgEnum("account_move_state", ["queued", "preparing", "copying", "switching", "cleaning", "forwarding", "done", "cancelling", "cancelled"]);

/** One step as it ran: when the driver began it (its first attempt) and when it ended (null: still running). */
export interface MoveStepTiming {
  step: string;
  started_at: string;
  ended_at: string | null;
}

export const accountMoves = pgTable(
  "account_moves",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    accountId: integer("account_id")
      .notNull()
      .references(() => hostingAccounts.id, { onDelete: "cascade" }),
    sourceNodeId: integer("source_node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    targetNodeId: integer("target_node_id")
      .notNull()
      .references(() => nodes.id, { onDelete: "cascade" }),
    state: moveState("state").notNull().default("queued"),
    // The move's own restic repository (MOVE_REPOSITORY/move-<id>) and its password, made for
    // this move: the target reads the snapshots of this account and no other. The password is
    // forgotten when the move ends.
    repository: text("repository").notNull(),
    repositoryPassword: text("repository_password"),
    // The snapshots each pass took (restic ids, space-separated): the first copy, the final one.
    copySnapshots: text("copy_snapshots"),
    finalSnapshots: text("final_snapshots"),
    // Why the last attempt of the current step failed, and how many attempts it has had.
    error: text("error"),
    attempts: integer("attempts").notNull().default(0),
    // Whoever drives the move now (one panel instance at a time), until when.
    leaseHolder: text("lease_holder"),
    leaseExpiresAt: timestamp("lease_expires_at", { withTimezone: true }),
    // Each step's timing, in the order they ran (GET .../move `steps`).
    steps: jsonb("steps").$type<MoveStepTiming[]>().notNull().default([]),
    // DNS before the switch (docs/nodes.md "Moving accounts"): the TTL each of the account's
    // A/AAAA/MX records had before the move lowered it (record id → seconds), given back when the
    // move ends; when the old TTL has passed since the lowering (the switch waits for it); and
    // until when the source forwards the account to the target after the switch.
    recordTtls: jsonb("record_ttls").$type<Record<string, number>>(),
    cachesClearAt: timestamp("caches_clear_at", { withTimezone: true }),
    forwardUntil: timestamp("forward_until", { withTimezone: true }),
    switchedAt: timestamp("switched_at", { withTimezone: true }),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    // One move of an account at a time.
    uniqueIndex("account_moves_one_open_idx")
      .on(table.accountId)
      .where(sql`${table.state} not in ('done', 'cancelled')`),
    index("account_moves_source_idx").on(table.sourceNodeId, table.state),
  ],
);
