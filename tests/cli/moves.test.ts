import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import { accountMoves, nodes } from "@/db/schema";
import { PROTOCOL_VERSION } from "@/lib/agent/protocol";
import { createPreparedTestDatabase, type TestDatabase, testBackends } from "../support/database";
import { runPanel, startPanel } from "../support/cli";

// Moves and drains from the command line (docs/command-line.md): a subprocess on PGlite and
// PostgreSQL. The command line records what is asked; the panel's server moves the accounts
// (tests/api/node-moves.test.ts), so here the moves stay queued — or the test writes their
// steps as the driver would, for the commands that follow them (PostgreSQL only: with PGlite the
// server cannot run beside the command line, and following is refused).

const moves = fs.mkdtempSync(path.join(os.tmpdir(), "panel-cli-moves-"));
after(() => fs.rmSync(moves, { recursive: true, force: true }));

const json = (result: { code: number; stdout: string; stderr: string }) => {
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
};

for (const backend of testBackends()) {
  describe(`moving accounts from the command line (${backend})`, () => {
    let database: TestDatabase;
    const run = (...args: string[]) => runPanel({ ...database.env, MOVE_REPOSITORY: moves }, ...args);

    before(async () => {
      database = await createPreparedTestDatabase(backend);
      const connection = await database.open();
      // A node that has joined (its agent is not running: a move to it would wait for it).
      await connection.db.insert(nodes).values({ name: "n2", ipv4: "192.0.2.2", publicKey: `U${"A".repeat(55)}`, protocolVersion: PROTOCOL_VERSION });
      await connection.close();
      for (const username of ["alice", "bob"]) json(await run("account", "create", "--username", username, "--domain", `${username}.example`, "--json"));
    });
    after(async () => {
      await database?.drop();
    });

    test("account move queues a move, refuses a second and an unknown node, and --cancel ends it", async () => {
      const unknown = await run("account", "move", "alice", "--to", "nowhere");
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /node: names no node: nowhere/);
      const queued = await run("account", "move", "alice", "--to", "n2");
      assert.equal(queued.code, 0, queued.stderr);
      assert.match(queued.stdout, /^alice moves from local to n2 \(move \d+, queued\); the panel's server runs it/);
      const { moves: listed } = json(await run("node", "moves", "local", "--json"));
      const [move] = listed.filter((row: { account: string }) => row.account === "alice");
      assert.deepEqual([move.state, move.step, move.source, move.target, move.can_cancel], ["queued", "queued", "local", "n2", true]);
      // Its steps: queued, begun when it was queued, not ended.
      assert.deepEqual(move.steps.map((step: { step: string; ended_at: string | null }) => [step.step, step.ended_at]), [["queued", null]]);
      const again = await run("account", "move", "alice", "--to", "n2");
      assert.equal(again.code, 1);
      assert.match(again.stderr, /already moving/);
      // While it is open the account is the move's: no suspend.
      const suspend = await run("account", "suspend", "alice");
      assert.equal(suspend.code, 1);
      assert.match(suspend.stderr, /moving to another node/);
      const cancelled = json(await run("account", "move", "alice", "--cancel", "--json")).move;
      assert.deepEqual([cancelled.state, cancelled.step, cancelled.can_cancel], ["cancelled", "cancelled", false]);
      // The cancel ended the queued step, when the move ended.
      assert.equal(cancelled.steps.length, 1);
      assert.equal(cancelled.steps[0].ended_at, cancelled.finished_at);
      assert.ok(cancelled.steps[0].started_at <= cancelled.steps[0].ended_at, JSON.stringify(cancelled.steps));
      assert.equal((await run("account", "move", "alice", "--cancel")).code, 1);
      // Without MOVE_REPOSITORY nothing is queued.
      const unset = await runPanel({ ...database.env, MOVE_REPOSITORY: undefined }, "account", "move", "alice", "--to", "n2");
      assert.equal(unset.code, 1);
      assert.match(unset.stderr, /MOVE_REPOSITORY/);
    });

    test("account move --wait says each step the move reaches and exits 1 when it is cancelled (PostgreSQL; refused on PGlite)", async () => {
      if (backend === "pglite") {
        const refused = await run("account", "move", "bob", "--to", "n2", "--wait");
        assert.equal(refused.code, 2);
        assert.match(refused.stderr, /Following a move needs PostgreSQL/);
        // Refused before anything was queued.
        assert.deepEqual(json(await run("node", "moves", "local", "--json")).moves.filter((move: { account: string }) => move.account === "bob"), []);
        return;
      }
      const connection = await database.open();
      const following = startPanel({ ...database.env, MOVE_REPOSITORY: moves }, "account", "move", "bob", "--to", "n2", "--wait");
      try {
        await following.waitFor(/Following it/);
        // Alice's move has ended: bob's is the only open one.
        const [{ id }] = await connection.db.select({ id: accountMoves.id }).from(accountMoves).where(eq(accountMoves.state, "queued"));
        // The steps as the panel's driver writes them: it starts, waits for n2, gives up, ends.
        const step = async (set: Partial<typeof accountMoves.$inferInsert>, printed: RegExp) => {
          await connection.db.update(accountMoves).set(set).where(eq(accountMoves.id, id));
          await following.waitFor(printed);
        };
        await step({ state: "preparing", error: "waiting for the node n2, which does not answer" }, /bob\tlocal → n2\tpreparing\twaiting for the node n2, which does not answer/);
        await step({ state: "cancelling", error: "cancelled after 5 failed attempts: n2 refused" }, /bob\tlocal → n2\tcancelling\tcancelled after 5 failed attempts/);
        await step({ state: "cancelled", error: null, finishedAt: new Date(), repositoryPassword: null }, /bob\tlocal → n2\tcancelled$/m);
        const result = await following.ended;
        assert.equal(result.code, 1);
        assert.match(result.stdout, /The move of bob ended cancelled; it stays on local\./);
        assert.match(result.stderr, /The move of bob to n2 was cancelled: cancelled after 5 failed attempts: n2 refused/);
        // Each step once, in order; the reason of the cancel kept from the step that had it.
        assert.deepEqual(result.stdout.match(/→ n2\t\w+/g), ["→ n2\tpreparing", "→ n2\tcancelling", "→ n2\tcancelled"]);
      } finally {
        following.stop();
        await connection.close();
      }
    });

    test("node drain --no-wait makes the node draining and queues a move for each of its accounts; node moves lists them", async () => {
      const drain = json(await run("node", "drain", "local", "--to", "n2", "--no-wait", "--json"));
      assert.equal(drain.node, "local");
      assert.deepEqual(drain.moves.filter((move: { step: string }) => move.step === "queued").map((move: { account: string }) => move.account).sort(), ["alice", "bob"]);
      const listed = json(await run("node", "list", "--json")).nodes.find((node: { name: string }) => node.name === "local");
      assert.equal(listed.state, "draining");
      const text = await run("node", "moves", "local");
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /alice\tlocal → n2\tqueued/);
      assert.match(text.stdout, /bob\tlocal → n2\tqueued/);
      // A draining node takes no moves.
      const into = await run("node", "drain", "n2", "--to", "local");
      assert.equal(into.code, 1);
      assert.match(into.stderr, /draining/);
    });

    test("node drain follows the node's moves until each has ended, exit 1 when one was cancelled (PostgreSQL; returns at once on PGlite)", async () => {
      if (backend === "pglite") {
        const atOnce = await run("node", "drain", "local", "--to", "n2");
        assert.equal(atOnce.code, 0, atOnce.stderr);
        assert.match(atOnce.stdout, /local is draining: 2 account\(s\) move to n2/);
        assert.match(atOnce.stdout, /Following a move needs PostgreSQL/);
        return;
      }
      // Draining again: its two queued moves (the test before) are the ones followed.
      const following = startPanel({ ...database.env, MOVE_REPOSITORY: moves }, "node", "drain", "local", "--to", "n2");
      try {
        await following.waitFor(/Following them/);
        assert.match(following.output(), /alice\tlocal → n2\tqueued[\s\S]*bob\tlocal → n2\tqueued/);
        json(await run("account", "move", "alice", "--cancel", "--json"));
        await following.waitFor(/alice\tlocal → n2\tcancelled/);
        json(await run("account", "move", "bob", "--cancel", "--json"));
        const result = await following.ended;
        assert.equal(result.code, 1);
        assert.match(result.stdout, /bob\tlocal → n2\tcancelled/);
        assert.match(result.stdout, /The 2 move\(s\) off local have ended: 0 done, 2 cancelled\./);
        assert.match(result.stderr, /Cancelled: alice, bob/);
      } finally {
        following.stop();
      }
    });
  });
}
