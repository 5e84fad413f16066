import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, nkeyAuthenticator } from "@nats-io/transport-node";
import type { Database } from "@/db/client";
import { startAgent } from "@/lib/agent/main";
import { loadOrCreateIdentity } from "@/lib/agent/identity";
import { decodeMessage, encodeMessage, JOBS_STREAM, PROTOCOL_VERSION } from "@/lib/agent/protocol";
import { nodeDataDir, runPanel } from "../support/cli";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { startNats, type TestNats } from "../support/nats";
import { startTlsFront, type TlsFront } from "../support/tls";
import { makeKey } from "../support/seed";
import { waitFor } from "../support/wait";

// Nodes and their credentials (docs/nodes.md "Security"): enrolment through the API and `panel node
// join`, the NATS authorization the panel writes, a job through a node's queue, and what a node's
// own key can and cannot reach — tried with the key itself, as a stolen node would.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-nodes-"));
let nats: TestNats;

before(async () => {
  nats = await startNats(path.join(root, "nats"));
});

after(async () => {
  await nats?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

const seed = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });

const seedOf = (env: { DATA_DIR: string }) => path.join(env.DATA_DIR, "node.nk");

for (const backend of machineBackends("postgres")) {
  describe(`nodes and their credentials (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const nodes: Record<string, { id: number; dir: ReturnType<typeof nodeDataDir> }> = {};

    // The panel over https, as nodes reach it (TLS in front of it, its certificate from the test's CA).
    let front: TlsFront;
    const panelUrl = () => `https://127.0.0.1:${front.port}`;

    before(async () => {
      env = await createEnvironment(backend, seed, nats.env);
      front = await startTlsFront(env.server.port, nats.tls);
    });
    after(async () => {
      await front?.stop();
      await env?.teardown();
    });

    test("the panel starts as its single node `local`, active", async () => {
      const { status, body } = await admin().get("/api/admin/nodes");
      assert.equal(status, 200);
      assert.deepEqual(body.nodes.map((node: { name: string; state: string }) => [node.name, node.state]), [["local", "active"]]);
    });

    test("a node is added with a one-time token and joins with `panel node join`: its seed stays on it (0600)", async () => {
      for (const name of ["n1", "n2"]) {
        const created = await admin().post("/api/admin/nodes", { name, ipv4: "10.1.0.1" });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        assert.match(created.body.enrolment_token, /^hcp_node_/);
        assert.equal(created.body.state, "unreachable");
        const dir = nodeDataDir(root, name);
        const joined = await runPanel(dir, "node", "join", "--panel", panelUrl(), "--token", created.body.enrolment_token, "--nats", nats.url, "--ca", nats.tls.caFile);
        assert.equal(joined.code, 0, joined.stderr);
        assert.match(joined.stdout, new RegExp(`node ${name}`));
        assert.equal(fs.statSync(seedOf(dir)).mode & 0o777, 0o600);
        const config = JSON.parse(fs.readFileSync(path.join(dir.DATA_DIR, "node.json"), "utf8"));
        assert.equal(config.name, name);
        nodes[name] = { id: created.body.id, dir };
        // Used once: the same token again is refused, and changes nothing.
        const again = await runPanel(nodeDataDir(root, "again"), "node", "join", "--panel", panelUrl(), "--token", created.body.enrolment_token, "--nats", nats.url, "--ca", nats.tls.caFile);
        assert.equal(again.code, 1);
        assert.match(again.stderr, /unknown or expired/);
      }
      assert.match(fs.readFileSync(nats.authFile, "utf8"), /# n2/);
    });

    test("a node's agent connects, heartbeats, and runs a job from its queue", async () => {
      const n1 = nodes.n1;
      const config = JSON.parse(fs.readFileSync(path.join(n1.dir.DATA_DIR, "node.json"), "utf8"));
      const agent = await startAgent(config, seedOf(n1.dir));
      try {
        const node = await waitFor("n1's heartbeat", async () => {
          const { body } = await admin().get(`/api/admin/nodes/${n1.id}`);
          return body.state === "active" && body.load !== null && body;
        });
        assert.equal(node.agent_version, "0.0.1");
        assert.ok(node.load.length === 3);
        // As the panel does: a job on n1's queue, its result on n1's events.
        const panelSeed = await loadOrCreateIdentity(path.join(env.database.env.DATA_DIR ?? "", "nats-panel.nk"));
        const panel = await connect({ ...nats.options, authenticator: nkeyAuthenticator(panelSeed.seed) });
        try {
          // Its results, the reconcile the panel queued at its hello among them: the one of this job.
          const results = panel.subscribe("panel.events.n1.result", { timeout: 15_000 });
          await jetstream(panel).publish("panel.jobs.n1", encodeMessage({ id: "job-1", protocol: PROTOCOL_VERSION, op: "ping", args: null }));
          for await (const message of results) {
            const result = decodeMessage(message.data) as { id: string };
            if (result.id !== "job-1") continue;
            assert.deepEqual(result, { id: "job-1", ok: true, value: { agent_version: "0.0.1", protocol: PROTOCOL_VERSION } });
            break;
          }
        } finally {
          await panel.close();
        }
      } finally {
        await agent.stop();
      }
    });

    test("node 1's key cannot consume, subscribe to or publish on node 2's subjects, nor queue jobs", async () => {
      // Something to steal: a job waiting on n2's queue.
      const panelIdentity = await loadOrCreateIdentity(path.join(env.database.env.DATA_DIR, "nats-panel.nk"));
      const panel = await connect({ ...nats.options, authenticator: nkeyAuthenticator(panelIdentity.seed) });
      const manager = await jetstreamManager(panel);
      await jetstream(panel).publish("panel.jobs.n2", encodeMessage({ id: `secret-${backend}`, protocol: PROTOCOL_VERSION, op: "ping", args: null }));
      const pendingBefore = (await manager.consumers.info(JOBS_STREAM, "node-n2")).num_pending;

      const n1Identity = await loadOrCreateIdentity(seedOf(nodes.n1.dir));
      const stolen = await connect({ ...nats.options, authenticator: nkeyAuthenticator(n1Identity.seed), inboxPrefix: "_INBOX_n1" });
      try {
        await assert.rejects(async () => (await jetstream(stolen).consumers.get(JOBS_STREAM, "node-n2")).next({ expires: 1000 }), /permissions violation/i);
        // The raw pull request on n2's consumer, with n1's own inbox for the answer: refused, nothing delivered.
        const inbox = stolen.subscribe("_INBOX_n1.steal", { timeout: 2000 });
        stolen.publish(`$JS.API.CONSUMER.MSG.NEXT.${JOBS_STREAM}.node-n2`, encodeMessage({ batch: 1, expires: 1_000_000_000 }), { reply: "_INBOX_n1.steal" });
        await assert.rejects(async () => {
          for await (const message of inbox) throw new Error(`n1 received ${new TextDecoder().decode(message.data)}`);
        }, /timeout/i);
        for (const subject of ["panel.jobs.n2", "panel.jobs.>", "panel.events.n2.result", "_INBOX_n2.>", ">"]) {
          const subscription = stolen.subscribe(subject);
          const closed = await Promise.race([subscription.closed, new Promise((resolve) => setTimeout(() => resolve("still open"), 2000))]);
          assert.match(String(closed), /permissions violation/i, subject);
        }
        // Forged events for n2 and a job queued by n1 itself: refused by the server.
        stolen.publish("panel.events.n2.heartbeat", encodeMessage({ agent_version: "9", protocol: PROTOCOL_VERSION, disk: null, load: [0, 0, 0] }));
        stolen.publish("panel.jobs.n1", encodeMessage({ id: "forged", protocol: PROTOCOL_VERSION, op: "ping", args: null }));
        await stolen.flush();
        await waitFor("both violations in the NATS log", async () => /Publish Violation.*"panel\.jobs\.n1"/.test(nats.log()));
        assert.match(nats.log(), /Publish Violation.*"panel\.events\.n2\.heartbeat"/);
        assert.match(nats.log(), /Publish Violation.*"panel\.jobs\.n1"/);
        const n2 = await admin().get(`/api/admin/nodes/${nodes.n2.id}`);
        assert.equal(n2.body.last_heartbeat_at, null);
        assert.equal(n2.body.state, "unreachable");
        assert.equal((await manager.consumers.info(JOBS_STREAM, "node-n2")).num_pending, pendingBefore);
      } finally {
        await stolen.close().catch(() => undefined);
        await panel.close();
      }
    });

    test("an agent older than the panel is shown as outdated and gets no accounts", async () => {
      const identity = await loadOrCreateIdentity(seedOf(nodes.n1.dir));
      const old = await connect({ ...nats.options, authenticator: nkeyAuthenticator(identity.seed), inboxPrefix: "_INBOX_n1" });
      try {
        old.publish("panel.events.n1.heartbeat", encodeMessage({ agent_version: "0.0.0", protocol: PROTOCOL_VERSION - 1, disk: null, load: [0, 0, 0] }));
        await old.flush();
      } finally {
        await old.close();
      }
      const node = await waitFor("n1 outdated", async () => {
        const { body } = await admin().get(`/api/admin/nodes/${nodes.n1.id}`);
        return body.state === "outdated" && body;
      });
      assert.equal(node.agent_version, "0.0.0");
      const refused = await admin().post("/api/admin/accounts", { username: "oldnode", domain: "oldnode.example", node: "n1" });
      assert.equal(refused.status, 422);
      assert.deepEqual(Object.keys(refused.body.errors), ["node"]);
    });

    test("a revoked node's agent is disconnected within 5 s and its key cannot connect again", async () => {
      const n2 = nodes.n2;
      const config = JSON.parse(fs.readFileSync(path.join(n2.dir.DATA_DIR, "node.json"), "utf8"));
      const agent = await startAgent(config, seedOf(n2.dir));
      await waitFor("n2's heartbeat", async () => (await admin().get(`/api/admin/nodes/${n2.id}`)).body.state === "active");
      const revokedAt = Date.now();
      assert.equal((await admin().delete(`/api/admin/nodes/${n2.id}`)).status, 200);
      await Promise.race([agent.stopped, new Promise((_, reject) => setTimeout(() => reject(new Error("still connected after 5 s")), 5000))]);
      assert.ok(Date.now() - revokedAt < 5000);
      const identity = await loadOrCreateIdentity(seedOf(n2.dir));
      await assert.rejects(connect({ ...nats.options, authenticator: nkeyAuthenticator(identity.seed), reconnect: false }), /authorization violation/i);
      assert.equal((await admin().get(`/api/admin/nodes/${n2.id}`)).status, 404);
      assert.doesNotMatch(fs.readFileSync(nats.authFile, "utf8"), /# n2/);
    });

    test("the local node cannot be removed, nor a name taken twice", async () => {
      const { body } = await admin().get("/api/admin/nodes");
      const local = body.nodes.find((node: { name: string }) => node.name === "local");
      const refused = await admin().delete(`/api/admin/nodes/${local.id}`);
      assert.equal(refused.status, 422);
      assert.equal((await admin().post("/api/admin/nodes", { name: "n1", ipv4: "10.1.0.9" })).status, 422);
      assert.equal((await admin().post("/api/admin/nodes", { name: "local", ipv4: "10.1.0.9" })).status, 422);
      assert.equal((await admin().post("/api/admin/nodes", { name: "Bad Name", ipv4: "10.1.0.9" })).status, 422);
    });
  });
}
