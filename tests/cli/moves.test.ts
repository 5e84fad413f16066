import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { nodes } from "@/db/schema";
import { PROTOCOL_VERSION } from "@/lib/agent/protocol";
import { createPreparedTestDatabase, type TestDatabase, testBackends } from "../support/database";
import { runPanel } from "../support/cli";

// Moves and drains from the command line (docs/command-line.md): a subprocess on PGlite and
// PostgreSQL. The command line records what is asked; the panel's server moves the accounts
// (tests/api/node-moves.test.ts), so here the moves stay queued.

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
      const { move } = json(await run("account", "move", "alice", "--to", "n2", "--json"));
      assert.deepEqual([move.state, move.step, move.source, move.target, move.can_cancel], ["queued", "queued", "local", "n2", true]);
      const again = await run("account", "move", "alice", "--to", "n2");
      assert.equal(again.code, 1);
      assert.match(again.stderr, /already moving/);
      // While it is open the account is the move's: no suspend.
      const suspend = await run("account", "suspend", "alice");
      assert.equal(suspend.code, 1);
      assert.match(suspend.stderr, /moving to another node/);
      const cancelled = json(await run("account", "move", "alice", "--cancel", "--json")).move;
      assert.deepEqual([cancelled.state, cancelled.step, cancelled.can_cancel], ["cancelled", "cancelled", false]);
      assert.equal((await run("account", "move", "alice", "--cancel")).code, 1);
      // Without MOVE_REPOSITORY nothing is queued.
      const unset = await runPanel({ ...database.env, MOVE_REPOSITORY: undefined }, "account", "move", "alice", "--to", "n2");
      assert.equal(unset.code, 1);
      assert.match(unset.stderr, /MOVE_REPOSITORY/);
    });

    test("node drain makes the node draining and queues a move for each of its accounts; node moves lists them", async () => {
      const drain = json(await run("node", "drain", "local", "--to", "n2", "--json"));
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
  });
}
