import assert from "node:assert/strict";
import net from "node:net";
import { Duplex } from "node:stream";
import { test } from "node:test";
import postgres from "postgres";

// postgres.js 3.4.9 poisons a connection whose socket closes while a small write is queued
// (setImmediate): `nextWriteTimer` stays set, so write() never schedules the next socket's startup
// packet and every query on it hangs until connect_timeout (porsager/postgres#1066, #1154, #1208).
// patches/postgres+3.4.9.patch fixes it at install. This test provokes exactly that: the first
// socket closes before its queued startup packet is flushed, the retry gets a real server.

const serverUrl = new URL(process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");

/**
 * A socket that closes as soon as the driver starts using it (it listens for data, then queues
 * its startup packet with setImmediate): the close comes first, on the next tick.
 */
function socketThatClosesAtOnce(): Duplex {
  const socket = new Duplex({ read() {}, write: (_chunk, _encoding, done) => done() });
  socket.once("newListener", function watch(event) {
    if (event === "data") process.nextTick(() => socket.emit("close", true));
    else socket.once("newListener", watch);
  });
  return socket;
}

test("a connection whose socket closed with a write queued connects again (patched postgres.js)", async () => {
  let attempts = 0;
  // `socket` (a function giving the driver its socket) is supported but missing from the types.
  const customSocket = {
    socket: () => {
      attempts++;
      if (attempts === 1) return socketThatClosesAtOnce();
      return new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect(Number(serverUrl.port || 5432), serverUrl.hostname);
        socket.once("connect", () => resolve(socket)).once("error", reject);
      });
    },
  } as object;
  const sql = postgres(serverUrl.toString(), { max: 1, connect_timeout: 3, onnotice: () => {}, ...customSocket });
  try {
    const started = performance.now();
    const [row] = await sql`select 1 as one`;
    assert.equal(row.one, 1);
    assert.ok(attempts >= 2, "the first socket was given up and a second one used");
    assert.ok(performance.now() - started < 2000, "the retry connected at once, not after a time-out");
  } finally {
    await sql.end({ timeout: 1 });
  }
});

// postgres.js 3.4.9 resets its row index only when a result completes: after a query that failed
// on its third row (or whose connection was lost mid-result), the next query on that connection
// stored its rows after two empty slots. Seen in tests/api/database-restart.test.ts as a zone
// file rendered from `[undefined, …]`. Patched (patches/postgres+3.4.9.patch).
test("the query after one that failed mid-result gets only its own rows (patched postgres.js)", async () => {
  const sql = postgres(serverUrl.toString(), { max: 1, onnotice: () => {} });
  try {
    await assert.rejects(sql`select 10 / (3 - g) as n from generate_series(1, 5) g`, { code: "22012" });
    const rows = await sql`select 1 as n`;
    assert.deepEqual([...rows], [{ n: 1 }]);
  } finally {
    await sql.end();
  }
});
