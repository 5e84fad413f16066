import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { nodeJobs } from "@/db/schema";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { startNats, type TestNats } from "../support/nats";
import { makeKey } from "../support/seed";
import { startTestNode, type TestNode } from "../support/test-node";

// Accounts on two hosting servers (docs/nodes.md "Tests and benchmarks"). Each test node is a
// machine of its own on this one (tests/support/node-host.ts: its own network namespace and
// address, its own /etc with its own users), running its own nginx and PHP-FPM and the panel's
// agent, enrolled through the API and `panel node join`; the panel and the NATS server stay
// outside. A site is asked for at its node's address, as a visitor's browser would.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-nodes-hosting-"));
let nats: TestNats;

before(async () => {
  // Every address: the nodes reach it over their veth pairs.
  nats = await startNats(path.join(root, "nats"), "0.0.0.0");
});

after(async () => {
  await nats?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

/** How long a change waits for its node in these tests before answering 503 (or 202). */
const JOB_TIMEOUT_S = 3;

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const seed = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });

for (const backend of testBackends()) {
  describe(`accounts on two nodes (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const nodes: TestNode[] = [];
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const nodeRecord = async (name: string) => (await admin().get("/api/admin/nodes")).body.nodes.find((node: { name: string }) => node.name === name);

    before(async () => {
      env = await createEnvironment(backend, seed, { ...nats.env, NODE_JOB_TIMEOUT_S: String(JOB_TIMEOUT_S) });
      for (const name of ["n1", "n2"]) nodes.push(await startTestNode(name, { panelPort: env.server.port, admin: env.seed.adminKey, nats }));
    });

    after(async () => {
      for (const node of nodes) await node.stop();
      await env?.teardown();
    });

    const [n1, n2] = [() => nodes[0], () => nodes[1]];
    const accounts: Record<string, { id: number; username: string; domain: string }> = {};

    test("accounts made on two nodes are served from their node's address, with their users only there", async () => {
      for (const [index, node] of nodes.entries()) {
        const username = `nh${backend.slice(0, 2)}${index}`;
        const domain = `${username}.example`;
        const created = await admin().post("/api/admin/accounts", { username, domain, node: node.name });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        assert.equal(created.body.node, node.name);
        assert.equal(created.body.node_sync, "ok");
        accounts[node.name] = { id: created.body.id, username, domain };
        const publicHtml = path.join(node.host.root, "home", username, "public_html");
        fs.writeFileSync(path.join(publicHtml, "index.html"), `served by ${node.name}\n`, { mode: 0o644 });
        const page = await node.visit(domain, "/index.html");
        assert.equal(page.status, 200);
        assert.equal(page.text, `served by ${node.name}\n`);
        // The other node does not host it.
        assert.equal((await nodes[1 - index].visit(domain, "/index.html")).status, 404);
        // Its Linux user is the node's own: not on the panel's machine, not on the other node.
        assert.equal(node.host.run("id", ["-u", username]).code, 0);
        assert.notEqual(nodes[1 - index].host.run("id", ["-u", username]).code, 0);
        assert.doesNotMatch(fs.readFileSync("/etc/passwd", "utf8"), new RegExp(`^${username}:`, "m"));
        // The zone's apex points at the node.
        const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
        const [main] = (await client.get("/api/client/domains")).body;
        const records = (await client.get(`/api/client/dns-records?domain_id=${main.id}`)).body;
        assert.equal(records.find((record: { type: string; name: string }) => record.type === "A" && record.name === "@").content, node.host.address);
      }
      const listed = await nodeRecord("n1");
      assert.equal(listed.accounts, 1);
    });

    test("a node's new address: the zones of its accounts follow it", async () => {
      const { username } = accounts.n1;
      const node = await nodeRecord("n1");
      const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
      const [main] = (await client.get("/api/client/domains")).body;
      const apex = async () =>
        (await client.get(`/api/client/dns-records?domain_id=${main.id}`)).body.find((record: { type: string; name: string }) => record.type === "A" && record.name === "@").content;
      assert.equal((await admin().put(`/api/admin/nodes/${node.id}`, { ipv4: "192.0.2.10" })).status, 200);
      assert.equal(await apex(), "192.0.2.10");
      assert.equal((await admin().put(`/api/admin/nodes/${node.id}`, { ipv4: n1().host.address })).status, 200);
      assert.equal(await apex(), n1().host.address);
    });

    test("a change on a node that answers is live when the API answers: a subdomain is served", async () => {
      const { username, domain } = accounts.n1;
      const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
      const [main] = (await client.get("/api/client/domains")).body;
      const sub = await client.post("/api/client/domains", { domain: `blog.${domain}`, domain_type: "subdomain", parent_domain_id: main.id, domain_path: "blog" });
      assert.equal(sub.status, 201, JSON.stringify(sub.body));
      fs.writeFileSync(path.join(n1().host.root, "home", username, "blog", "index.html"), "blog\n", { mode: 0o644 });
      assert.equal((await n1().visit(`blog.${domain}`, "/index.html")).text, "blog\n");
    });

    test("an agent stopped while its account is suspended: 202 pending, applied once within 30 s of SIGCONT", async () => {
      const { id, domain } = accounts.n1;
      n1().agent!.kill("SIGSTOP");
      try {
        const suspended = await admin().post(`/api/admin/accounts/${id}/suspend`, { reason: "unpaid" });
        assert.equal(suspended.status, 202, JSON.stringify(suspended.body));
        assert.equal(suspended.body.status, "suspended");
        assert.equal(suspended.body.node_sync, "pending");
        assert.equal((await admin().get(`/api/admin/accounts/${id}`)).body.node_sync, "pending");
        // Not applied yet: the node has not done it.
        assert.equal((await n1().visit(domain, "/index.html")).status, 200);
      } finally {
        n1().agent!.kill("SIGCONT");
      }
      const resumedAt = Date.now();
      await waitFor("the suspension on n1", async () => (await n1().visit(domain, "/index.html")).status === 503);
      assert.ok(Date.now() - resumedAt < 30_000);
      await waitFor("node_sync ok", async () => (await admin().get(`/api/admin/accounts/${id}`)).body.node_sync === "ok");
      if (env.db) {
        const jobs = await env.db.select().from(nodeJobs).where(eq(nodeJobs.accountId, id));
        const suspends = jobs.filter((job) => job.kind === "suspend");
        assert.equal(suspends.length, 1);
        assert.equal(suspends[0].state, "done");
      }
      const unsuspended = await admin().post(`/api/admin/accounts/${id}/unsuspend`);
      assert.equal(unsuspended.status, 200);
      assert.equal((await n1().visit(domain, "/index.html")).status, 200);
    });

    test("a change while its node does not answer: 503 with Retry-After naming the node, nothing stored", async () => {
      const { username, domain } = accounts.n1;
      const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
      const before = (await client.get("/api/client/domains")).body;
      n1().agent!.kill("SIGSTOP");
      try {
        const [main] = before;
        const refused = await client.post("/api/client/domains", { domain: `shop.${domain}`, domain_type: "subdomain", parent_domain_id: main.id, domain_path: "shop" });
        assert.equal(refused.status, 503, JSON.stringify(refused.body));
        assert.match(refused.body.error, /n1/);
        assert.ok(Number(refused.headers.get("retry-after")) > 0);
        assert.deepEqual((await client.get("/api/client/domains")).body, before);
        // Once unreachable (no heartbeat), nothing is even tried.
        await waitFor("n1 unreachable", async () => (await nodeRecord("n1")).state === "unreachable", 30_000);
        const again = await client.post("/api/client/cron-jobs", { schedule: "@daily", command: "true", is_enabled: true });
        assert.equal(again.status, 503);
        assert.deepEqual((await client.get("/api/client/cron-jobs")).body, []);
      } finally {
        n1().agent!.kill("SIGCONT");
      }
      await waitFor("n1 active again", async () => (await nodeRecord("n1")).state === "active");
      // The job n1 had taken is dropped past its expiry, and the reconcile keeps it as the database says.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      assert.equal((await n1().visit(`shop.${domain}`, "/")).status, 404);
    });

    test("an agent that comes back reconciles its accounts: a removed site and keys file are made again", async () => {
      const { domain } = accounts.n2;
      await n2().stopAgent();
      const site = path.join(n2().servers.env.NGINX_SITES_DIR, `${domain}.conf`);
      fs.rmSync(site);
      n2().startAgent();
      await waitFor("n2's site written again", async () => fs.existsSync(site));
      await waitFor("n2 serving it", async () => (await n2().visit(domain, "/index.html")).status === 200);
    });

    test("terminate while the node is away: 202, the records go once the node has removed everything", async () => {
      const { id, username } = accounts.n2;
      n2().agent!.kill("SIGSTOP");
      try {
        const terminated = await admin().delete(`/api/admin/accounts/${id}`);
        assert.equal(terminated.status, 202, JSON.stringify(terminated.body));
        const pending = await admin().get(`/api/admin/accounts/${id}`);
        assert.equal(pending.body.node_sync, "pending");
        assert.equal(pending.body.status, "suspended");
      } finally {
        n2().agent!.kill("SIGCONT");
      }
      await waitFor("the account gone", async () => (await admin().get(`/api/admin/accounts/${id}`)).status === 404);
      assert.notEqual(n2().host.run("id", ["-u", username]).code, 0);
      assert.equal(fs.existsSync(path.join(n2().host.root, "home", username)), false);
    });
  });
}
