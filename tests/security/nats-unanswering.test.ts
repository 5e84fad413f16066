import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createUser } from "@nats-io/nkeys";
import { PROTOCOL_VERSION } from "@/lib/agent/protocol";
import { createTestDatabase, machineBackends, type TestDatabase } from "../support/database";
import { apiClient, type Credentials } from "../support/http";
import { startNats, type TestNats } from "../support/nats";
import { makeKey } from "../support/seed";
import { freePort, startServer } from "../support/server";
import { makeTestCertificates } from "../support/tls";

// The panel never waits on NATS to serve (issue 36, item 6b; docs/nodes.md "What the API
// promises"). Whoever can make the NATS server's port silent — or answer it with a certificate
// the panel refuses — must not take the whole panel down: it starts, answers HTTP at once, and
// its nodes show unreachable. Seen to fail on the code before issue 36: the first NATS connection
// was awaited at start, so with either server the panel never listened (the test's 60 s start
// timed out).

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-nats-unanswering-"));
const sockets = new Set<net.Socket>();
/** A port that accepts TCP and never says a word (no NATS INFO, no TLS). */
const silent = net.createServer((socket) => {
  sockets.add(socket);
  socket.on("error", () => undefined);
  socket.on("close", () => sockets.delete(socket));
});
let silentPort: number;
let nats: TestNats;

before(async () => {
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  silentPort = (silent.address() as net.AddressInfo).port;
  nats = await startNats(path.join(root, "nats"));
});

after(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
  await nats?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

const [backend] = machineBackends("pglite");

describe(`a NATS server that does not answer (${backend})`, () => {
  let database: TestDatabase;
  let adminKey: Credentials;

  before(async () => {
    database = await createTestDatabase(backend);
    const connection = await database.open();
    adminKey = await makeKey(connection.db, { scope: "admin" });
    await connection.close();
  });
  after(async () => {
    await database?.drop();
  });

  /** Starts the panel with `natsEnv`: how long until it listened, and what it answers meanwhile. */
  async function startAndAsk(natsEnv: Record<string, string>) {
    const startedAt = Date.now();
    const server = await startServer({ ...database.env, ...natsEnv });
    const listenedAfterMs = Date.now() - startedAt;
    try {
      const admin = apiClient(server.baseUrl, adminKey);
      const askedAt = Date.now();
      const created = await admin.post("/api/admin/nodes", { name: `n${Date.now() % 100000}`, ipv4: "10.1.0.9" });
      const listed = await admin.get("/api/admin/nodes");
      return { listenedAfterMs, answeredAfterMs: Date.now() - askedAt, created, listed, output: server.output() };
    } finally {
      await server.stop();
    }
  }

  // How long a start takes now, on this machine's load, with NATS_URL at a port that refuses at
  // once (nothing there to wait for): CI run 18 saw a start take 24 s under load, so a fixed bound
  // on the start cannot tell waiting from a busy machine.
  let referenceStartMs: number;
  before(async () => {
    const closed = await freePort();
    referenceStartMs = (await startAndAsk({ NATS_URL: `tls://127.0.0.1:${closed}`, NATS_CA_FILE: nats.tls.caFile })).listenedAfterMs;
  });

  const checkAnswered = (result: Awaited<ReturnType<typeof startAndAsk>>) => {
    // nats.js gives a silent server 20 s before it gives up on one attempt: a panel that waited on
    // it would start that much later than the reference start. The bounds stay well apart from it
    // (a loaded machine took 5.8 s to add a node and list the nodes).
    assert.ok(result.listenedAfterMs < referenceStartMs + 10_000, `listened after ${result.listenedAfterMs} ms (the reference start: ${referenceStartMs} ms)`);
    assert.ok(result.answeredAfterMs < 15_000, `answered after ${result.answeredAfterMs} ms`);
    assert.equal(result.created.status, 201, JSON.stringify(result.created.body));
    assert.equal(result.listed.status, 200);
    const added = result.listed.body.nodes.find((node: { id: number }) => node.id === result.created.body.id);
    assert.equal(added.state, "unreachable");
  };

  test("NATS_URL at a port that accepts TCP and never speaks: the panel starts and answers HTTP at once", async () => {
    checkAnswered(await startAndAsk({ NATS_URL: `tls://127.0.0.1:${silentPort}`, NATS_CA_FILE: nats.tls.caFile }));
  });

  test("a NATS server whose certificate the panel refuses (another CA): the panel starts and answers HTTP at once, and says why it is not connected", async () => {
    const other = makeTestCertificates(path.join(root, "other-ca"));
    const result = await startAndAsk({ ...nats.env, NATS_CA_FILE: other.caFile });
    checkAnswered(result);
    assert.match(result.output, /NATS at tls:\/\/127\.0\.0\.1:\d+ does not take the panel's connection/);
  });

  test("a nats:// NATS_URL with NATS_INSECURE=1: the panel starts, warning that it speaks without TLS", async () => {
    const result = await startAndAsk({ NATS_URL: `nats://127.0.0.1:${silentPort}`, NATS_INSECURE: "1" });
    checkAnswered(result);
    assert.match(result.output, /WARNING: The panel speaks to nats:\/\/127\.0\.0\.1:\d+ without TLS \(NATS_INSECURE=1\)/);
  });

  // Seen failing: a node joined right after the panel started, while the panel was still making
  // its connection in the background (beyond NODE_JOB_TIMEOUT_S under load), and was refused.
  test("a join while the panel's NATS connection is still being made waits for it, and then succeeds", async () => {
    await nats.stop();
    const server = await startServer({ ...database.env, ...nats.env, NODE_JOB_TIMEOUT_S: "2" });
    try {
      const admin = apiClient(server.baseUrl, adminKey);
      const created = await admin.post("/api/admin/nodes", { name: "joinlate", ipv4: "10.1.0.10" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const joining = fetch(`${server.baseUrl}/api/nodes/join`, {
        method: "POST",
        headers: { "content-type": "application/json", connection: "close" },
        body: JSON.stringify({ token: created.body.enrolment_token, public_key: createUser().getPublicKey(), agent_version: "0.0.1", protocol: PROTOCOL_VERSION }),
      });
      // Past the node jobs' 2 s, NATS comes up; the panel connects at its next try.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      await nats.restart();
      const joined = await joining;
      assert.equal(joined.status, 200, await joined.text());
    } finally {
      await server.stop();
    }
  });
});
