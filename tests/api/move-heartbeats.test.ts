import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { eq, inArray } from "drizzle-orm";
import { accountMoves, dnsRecords, domains } from "@/db/schema";
import type { Actor } from "@/lib/audit/service";
import { createAccount, getAccount } from "@/lib/accounts/service";
import type { AppError } from "@/lib/errors";
import { advanceMoves } from "@/lib/moves/driver";
import { startMoveSchema } from "@/lib/moves/schemas";
import { getMove, startMove } from "@/lib/moves/service";
import { testBackends } from "../support/database";
import { beatStandInNodes, useStandInNodes, withStandInNodes } from "../support/stand-in-agent";

// Issue 37, item 0: a move's node is judged at each call from its current heartbeat. The source's
// first pass is held for longer than the heartbeat limit (15 s) while both nodes keep beating, as
// a pass over a large home on a loaded machine is; the target's restore that follows in the same
// step must reach the target. On the code before, the step judged the target by the row it read
// when the step began — 17 s old by then — refused it ("the node n3 does not answer"), counted a
// failed attempt and left the move in copying.

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "panel-move-heartbeats-"));
Object.assign(process.env, {
  DATA_DIR: path.join(scratch, "data"),
  ZONES_DIR: path.join(scratch, "data", "zones"),
  MOVE_REPOSITORY: path.join(scratch, "moves"),
  NATS_SEED_FILE: path.join(scratch, "nats-panel.nk"),
  // The stand-in agent's server listens on loopback only, without TLS.
  NATS_INSECURE: "1",
  // The held pass is answered well within this (a stand-in sends no "working" words).
  NODE_JOB_TIMEOUT_S: "60",
});
for (const name of ["DATABASE_URL", "MYSQL_PROVISION_URL", "WEB_SERVER", "SYSTEM_USERS", "SSH_SERVER", "NATS_AUTH_FILE", "NATS_RELOAD_COMMAND"]) delete process.env[name];

const admin: Actor = { type: "cli" };
const HELD_MS = 17_000;

const agent = useStandInNodes(scratch);
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

for (const backend of testBackends()) {
  describe(`a move's nodes judged at each call (${backend})`, () => {
    test(`a pass held ${HELD_MS / 1000} s while the nodes beat: the next call of the step reaches the target, the move switches with no failed attempt`, async () => {
      await withStandInNodes(backend, { n2: "192.0.2.2", n3: "192.0.2.3" }, async (db) => {
        const beat = () => beatStandInNodes(db, ["n2", "n3"]);
        await beat();
        const account = await createAccount(db, { username: `hb${backend.slice(0, 2)}`, domain: `hb${backend.slice(0, 2)}.example`, node: "n2" }, admin);
        // Its records at the short TTL already: the switch waits for no cache (tests/api/move-dns.test.ts).
        await db.update(dnsRecords).set({ ttl: 60 }).where(inArray(dnsRecords.domainId, db.select({ id: domains.id }).from(domains).where(eq(domains.accountId, account.id))));
        await startMove(db, account.id, startMoveSchema.parse({ node: "n3" }), admin);

        const held = agent().hold("n2", "move.snapshot");
        const driving = advanceMoves(db, "driver");
        await held.reached;
        const beating = setInterval(() => void beat(), 2_000);
        await new Promise((resolve) => setTimeout(resolve, HELD_MS));
        held.release();
        await driving;
        clearInterval(beating);

        const [move] = await db.select().from(accountMoves).where(eq(accountMoves.accountId, account.id));
        // Switched and cleaned: the source forwards now, until its time is over.
        assert.deepEqual({ state: move.state, attempts: move.attempts, error: move.error }, { state: "forwarding", attempts: 0, error: null });

        // Item 4: each step's timing, in the order the state machine ran them, each ended before
        // the next began, forwarding running; the held pass is copying's.
        const { move: answered } = await getMove(db, account.id);
        const steps = answered.steps;
        assert.deepEqual(steps.map((step) => step.step), ["queued", "preparing", "copying", "switching", "cleaning", "forwarding"]);
        assert.equal(steps.at(-1)!.ended_at, null);
        const times = steps.slice(0, -1).flatMap((step) => [Date.parse(step.started_at), Date.parse(step.ended_at ?? "")]).concat(Date.parse(steps.at(-1)!.started_at));
        assert.ok(times.every((time, index) => !Number.isNaN(time) && (index === 0 || times[index - 1] <= time)), JSON.stringify(steps));
        const took = (name: string) => Date.parse(steps.find((step) => step.step === name)!.ended_at!) - Date.parse(steps.find((step) => step.step === name)!.started_at);
        assert.ok(took("copying") >= HELD_MS, JSON.stringify(steps));
        // The account's record carries the same move; an account that never moved has none to answer.
        // (`waiting` counts the forward's seconds left at each read: compared by its form; a slow
        // machine read 107 s left, then 102.)
        const { waiting: waitingOnRecord, ...onRecord } = (await getAccount(db, account.id)).move!;
        const { waiting: _, ...asAnswered } = answered;
        assert.deepEqual(onRecord, asAnswered);
        assert.match(waitingOnRecord ?? "", /^the source forwards to the target, \d+ s left$/);
        const still = await createAccount(db, { username: `st${backend.slice(0, 2)}`, domain: `st${backend.slice(0, 2)}.example`, node: "n2" }, admin);
        await assert.rejects(getMove(db, still.id), (error: AppError) => error.code === "NOT_FOUND");
        await assert.rejects(getMove(db, 2147483647), (error: AppError) => error.code === "NOT_FOUND");
      });
    });
  });
}
