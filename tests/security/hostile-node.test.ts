import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type JsMsg, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection, nkeyAuthenticator } from "@nats-io/transport-node";
import type { Database } from "@/db/client";
import { loadOrCreateIdentity } from "@/lib/agent/identity";
import { decodeMessage, encodeMessage, type Job, JOBS_STREAM, PROTOCOL_VERSION } from "@/lib/agent/protocol";
import { runPanel } from "../support/cli";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { startNats, type TestNats } from "../support/nats";
import { makeKey } from "../support/seed";
import { startTestNode, type TestNode } from "../support/test-node";
import { waitFor } from "../support/wait";

// A node whose root was taken (docs/security.md "Nodes are not trusted"), acted as the attacker
// acts: n1 is a fake agent holding the real credentials n1 got at `panel node join` (its NKEY),
// answering the jobs the panel sends it with crafted values; n2 is a real node (its own nginx,
// PHP-FPM and MariaDB, tests/support/test-node.ts) hosting a neighbour. Each crafted value is
// refused, and nothing changes on n2 or in the panel.
//
// Seen on the code before this change: the move test failed (the target n2 dropped and re-created
// the neighbour's database user with the source's hash, and the move's error was the target's),
// and so did the oversized refusal (a 100 kB message answered to the client) and the malformed
// heartbeat (a negative disk stored). The forged result and the event under n2's name were
// already refused then (by the job's node and by NATS's permissions): kept as regression guards.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-hostile-node-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const seed = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });
const ID = "f".repeat(64);
const ATTACKER_HASH = `*${"0123456789ABCDEF".repeat(3).slice(0, 40)}`;
const OPTION = "--option=sftp.command=/bin/sh -c 'touch /tmp/hostile-node-ran'";

type Answer = (job: Job) => { ok: true; value: unknown } | { ok: false; error: { code: string; message: string; fields?: unknown } };

/** The fake agent: n1's NKEY, its hello and heartbeats, and `answer` for each job from n1's queue. */
async function startFakeAgent(nats: TestNats, seedFile: string, answer: () => Answer) {
  const identity = await loadOrCreateIdentity(seedFile);
  const connection: NatsConnection = await connect({ ...nats.options, authenticator: nkeyAuthenticator(identity.seed), inboxPrefix: "_INBOX_n1" });
  const publish = (kind: string, body: unknown) => connection.publish(`panel.events.n1.${kind}`, encodeMessage(body));
  const beat = { agent_version: "0.0.1", protocol: PROTOCOL_VERSION, disk: { total_bytes: 1000, used_bytes: 10 }, load: [0, 0, 0] };
  let beating = true;
  publish("hello", { agent_version: "0.0.1", protocol: PROTOCOL_VERSION });
  publish("heartbeat", beat);
  const timer = setInterval(() => beating && publish("heartbeat", beat), 2000);
  const jobs: Job[] = [];
  const messages = await (await jetstream(connection).consumers.get(JOBS_STREAM, "node-n1")).consume({ max_messages: 1 });
  void (async () => {
    for await (const message of messages as AsyncIterable<JsMsg>) {
      const job = decodeMessage(message.data) as Job;
      jobs.push(job);
      message.ack();
      publish("result", { id: job.id, ...answer()(job) });
    }
  })().catch(() => undefined);
  return {
    connection,
    jobs,
    publish,
    pauseHeartbeats: () => (beating = false),
    resumeHeartbeats: () => (beating = true),
    async stop() {
      clearInterval(timer);
      messages.stop();
      await connection.close();
    },
  };
}

/** What an honest n1 answers: each operation's value of its form, for what it was asked. */
const honest: Answer = (job) => {
  const args = job.args as Record<string, any>;
  if (job.op === "account.provision") {
    return { ok: true, value: { username: args.account.username, userCreated: true, homeWasThere: false, siteDomains: args.account.domains.map((domain: { domain: string }) => domain.domain) } };
  }
  if (job.op === "databases.call") return { ok: true, value: { configured: true, ...(args.call === "databaseSizesMb" ? { value: [] } : {}) } };
  if (job.op === "node.reconcile") return { ok: true, value: { failed: [] } };
  if (job.op === "account.disk-usage") return { ok: true, value: { mb: 0, enforced: false } };
  if (job.op === "mail.apply") return { ok: true, value: { settle_ms: 0 } };
  if (job.op === "mail.dkim-key") return { ok: true, value: { public_key: null } };
  return { ok: true, value: null };
};

for (const backend of machineBackends("postgres")) {
  describe(`a hostile node (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    let nats: TestNats;
    let n2: TestNode;
    let fake: Awaited<ReturnType<typeof startFakeAgent>>;
    let answer: Answer = honest;
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const suffix = randomBytes(3).toString("hex");
    const [bob, eve] = [`bob${suffix}`, `eve${suffix}`];
    let n1Id = 0;
    let bobId = 0;

    /** A query of n2's MariaDB as its root: the rows, tab-separated. */
    const onN2 = (sql: string) => {
      const ran = n2.host.run("mariadb", ["--no-defaults", "-h", "127.0.0.1", "-u", "root", "-N", "-B", "-e", sql]);
      assert.equal(ran.code, 0, ran.stderr);
      return ran.stdout.trim();
    };

    before(async () => {
      nats = await startNats(path.join(root, backend, "nats"), "0.0.0.0");
      env = await createEnvironment(backend, seed, { ...nats.env, NODE_JOB_TIMEOUT_S: "6", MOVE_REPOSITORY: path.join(root, backend, "moves") });
      n2 = await startTestNode("n2", { panelPort: env.server.port, admin: env.seed.adminKey, nats, mariadb: true });
      // n1 enrols as any node does; its seed is what the attacker took.
      const created = await admin().post("/api/admin/nodes", { name: "n1", ipv4: "10.1.0.1" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      n1Id = created.body.id;
      const dir = { DATA_DIR: path.join(root, backend, "n1"), HOME_ROOT: path.join(root, backend, "n1-home"), DATABASE_URL: undefined };
      fs.mkdirSync(dir.DATA_DIR, { recursive: true });
      // The panel is plain HTTP here (no TLS front: n1 is no namespace node), NATS is TLS.
      const joined = await runPanel(dir, "node", "join", "--panel", env.server.baseUrl, "--insecure", "--token", created.body.enrolment_token, "--nats", nats.url, "--ca", nats.tls.caFile);
      assert.equal(joined.code, 0, joined.stderr);
      fake = await startFakeAgent(nats, path.join(dir.DATA_DIR, "node.nk"), () => answer);
      await waitFor("n1 active", async () => (await admin().get(`/api/admin/nodes/${n1Id}`)).body.state === "active");
    });

    after(async () => {
      await fake?.stop();
      await n2?.stop();
      await env?.teardown();
      await nats?.stop();
    });

    /** An account on `node` with a database and a database user of its own: the user's name on the server. */
    async function accountWithDatabase(username: string, node: string): Promise<{ id: number; databaseUser: string }> {
      const created = await admin().post("/api/admin/accounts", { username, domain: `${username}.example`, node });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
      const database = await client.post("/api/client/databases", { database_name: "shop" });
      assert.equal(database.status, 201, JSON.stringify(database.body));
      const user = await client.post("/api/client/database-users", { username: "u", password: `${username}-database-secret` });
      assert.equal(user.status, 201, JSON.stringify(user.body));
      const granted = await client.post(`/api/client/database-users/${user.body.id}/assign-database`, { database_id: database.body.id, privileges: ["ALL PRIVILEGES"] });
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
      return { id: created.body.id, databaseUser: user.body.username };
    }

    test("a move's source answering with `mysql`, a neighbour's database user and option-looking snapshots is refused: the target changes nothing", async () => {
      const neighbour = await accountWithDatabase(bob, "n2");
      bobId = neighbour.id;
      const hashBefore = onN2(`SELECT authentication_string FROM mysql.user WHERE User = '${neighbour.databaseUser}'`);
      assert.match(hashBefore, /^\*[0-9A-F]{40}$/);
      const systemGrantsBefore = onN2("SELECT COUNT(*) FROM mysql.db WHERE Db LIKE 'mysql%' OR Db LIKE 'sys%' OR Db LIKE '%schema%'");
      const mover = await accountWithDatabase(eve, "n1");

      // Every pass of the move: the source's crafted answer, in the shape of each protocol version.
      let passes = 0;
      answer = (job) => {
        if (job.op !== "move.snapshot") return honest(job);
        passes++;
        const hashes = { [neighbour.databaseUser]: ATTACKER_HASH, [mover.databaseUser]: ATTACKER_HASH };
        const snapshot = { id: ID, short_id: "ffffffff", time: new Date().toISOString(), paths: [OPTION], tags: ["part:home"] };
        return passes % 2
          ? { ok: true, value: { home: snapshot, dumps: [{ database: "mysql", snapshot: { ...snapshot, paths: ["/mysql.sql"] } }], password_hashes: hashes } }
          : { ok: true, value: { home: OPTION, dumps: [{ database: "mysql", snapshot: ID }], password_hashes: hashes } };
      };
      try {
        const started = await admin().post(`/api/admin/accounts/${mover.id}/move`, { node: "n2" });
        assert.equal(started.status, 202, JSON.stringify(started.body));
        const moveOf = async () => (await admin().get(`/api/admin/accounts/${mover.id}`)).body.move;
        // The refusal is the move's error while it tries again (a move that ends forgets it)…
        await waitFor("the move to name n1's refused answer", async () => {
          const move = await moveOf();
          return passes >= 2 && /The node n1 answered move\.snapshot with what the panel did not ask for/.test(move?.error ?? "");
        }, 120_000);
        // …and after MAX_ATTEMPTS of them the move is cancelled, the account n1's as before.
        const move = await waitFor("the move to end", async () => {
          const current = await moveOf();
          return current && ["cancelled", "done"].includes(current.step) && current;
        }, 180_000);
        assert.equal(move.step, "cancelled");
      } finally {
        answer = honest;
      }
      // n2: the neighbour's user as it was, no rights on the server's own databases, nothing run.
      assert.equal(onN2(`SELECT authentication_string FROM mysql.user WHERE User = '${neighbour.databaseUser}'`), hashBefore);
      assert.equal(onN2("SELECT COUNT(*) FROM mysql.db WHERE Db LIKE 'mysql%' OR Db LIKE 'sys%' OR Db LIKE '%schema%'"), systemGrantsBefore);
      assert.equal(onN2(`SELECT COUNT(*) FROM mysql.user WHERE User = '${mover.databaseUser}'`), "0");
      assert.equal(onN2("SELECT COUNT(*) FROM mysql.global_priv WHERE JSON_VALUE(Priv, '$.access') <> '0' AND User NOT IN ('root', 'mariadb.sys', '')"), "0");
      assert.equal(fs.existsSync("/tmp/hostile-node-ran"), false);
      // The panel: the account is still n1's, with its records.
      const { body } = await admin().get(`/api/admin/accounts/${mover.id}`);
      assert.equal(body.node, "n1");
    });

    test("a refusal of 100 kB with a made-up error code reaches the client bounded, in the panel's words", async () => {
      answer = (job) =>
        job.op === "databases.call" && (job.args as { call: string }).call === "createDatabase"
          ? { ok: false, error: { code: "VALIDATION", message: `<script>${"x".repeat(100_000)}`, fields: { database_name: ["y".repeat(50_000)], ...Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`f${i}`, ["z"]])) } } }
          : honest(job);
      try {
        const client = apiClient(env.server.baseUrl, env.seed.adminKey, eve);
        const refused = await client.post("/api/client/databases", { database_name: "big" });
        assert.equal(refused.status, 422);
        assert.ok(JSON.stringify(refused.body).length < 2_000, `an answer of ${JSON.stringify(refused.body).length} characters`);
        answer = (job) => (job.op === "databases.call" && (job.args as { call: string }).call === "createDatabase" ? { ok: false, error: { code: "__proto__", message: "made up" } } : honest(job));
        const fault = await client.post("/api/client/databases", { database_name: "odd" });
        assert.equal(fault.status, 500);
        assert.doesNotMatch(JSON.stringify(fault.body), /made up/);
      } finally {
        answer = honest;
      }
      const { body } = await apiClient(env.server.baseUrl, env.seed.adminKey, eve).get("/api/client/databases");
      assert.deepEqual(
        body.map((database: { database_name: string }) => database.database_name).filter((name: string) => /big|odd/.test(name)),
        [],
      );
    });

    test("a malformed heartbeat is dropped whole: no negative or unbounded figure is stored", async () => {
      fake.pauseHeartbeats();
      try {
        fake.publish("heartbeat", { agent_version: "evil", protocol: PROTOCOL_VERSION, disk: { total_bytes: -1, used_bytes: 1e300 }, load: [-5, 1e300, 0] });
        // A hello after it, which sets the version only: once it shows, the heartbeat before it was handled.
        fake.publish("hello", { agent_version: "after-evil", protocol: PROTOCOL_VERSION });
        const node = await waitFor("n1's hello", async () => {
          const { body } = await admin().get(`/api/admin/nodes/${n1Id}`);
          return body.agent_version === "after-evil" && body;
        });
        assert.deepEqual(node.disk, { total_bytes: 1000, used_bytes: 10 });
        assert.deepEqual(node.load, [0, 0, 0]);
      } finally {
        fake.resumeHeartbeats();
      }
    });

    test("a result for a job n1 was not sent, and an event under n2's name, change nothing", async () => {
      await n2.stopAgent();
      await waitFor("n2 unreachable", async () => (await admin().get("/api/admin/nodes")).body.nodes.find((node: { name: string }) => node.name === "n2").state === "unreachable", 60_000);
      assert.equal((await admin().post(`/api/admin/accounts/${bobId}/suspend`, {})).status, 202);
      // The job waiting on n2's queue, read as the panel reads it: n1 forges its result, a failure.
      const panelIdentity = await loadOrCreateIdentity(path.join(env.database.env.DATA_DIR, "nats-panel.nk"));
      const panel = await connect({ ...nats.options, authenticator: nkeyAuthenticator(panelIdentity.seed) });
      try {
        const waiting = await jetstreamManager(panel).then((manager) => manager.streams.getMessage(JOBS_STREAM, { last_by_subj: "panel.jobs.n2" }));
        const job = decodeMessage(waiting!.data) as Job;
        fake.publish("result", { id: job.id, ok: false, error: { code: "VALIDATION", message: "forged by n1" } });
        fake.connection.publish("panel.events.n2.result", encodeMessage({ id: job.id, ok: false, error: { code: "VALIDATION", message: "forged by n1 as n2" } }));
        fake.connection.publish("panel.events.n2.heartbeat", encodeMessage({ agent_version: "forged", protocol: PROTOCOL_VERSION, disk: null, load: [0, 0, 0] }));
        await fake.connection.flush();
        await waitFor("NATS refusing n1's events under n2's name", async () => /Publish Violation.*"panel\.events\.n2\.heartbeat"/.test(nats.log()));
      } finally {
        await panel.close();
      }
      // n2 back: its own result is the one that counts.
      n2.startAgent();
      const account = await waitFor("bob's suspension applied by n2", async () => {
        const { body } = await admin().get(`/api/admin/accounts/${bobId}`);
        return body.node_sync !== "pending" && body;
      }, 60_000);
      assert.equal(account.node_sync, "ok", JSON.stringify(account));
      assert.equal(account.node_error, null);
      const n2Row = (await admin().get("/api/admin/nodes")).body.nodes.find((node: { name: string }) => node.name === "n2");
      assert.notEqual(n2Row.agent_version, "forged");
    });
  });
}
