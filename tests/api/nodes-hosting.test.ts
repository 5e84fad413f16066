import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { nodeJobs } from "@/db/schema";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { backUp } from "../support/backups";
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

    test("backups run on the account's node, into that node's own repository, and restore there", async () => {
      const runs: Record<string, string> = {};
      for (const node of nodes) {
        const { id, username } = accounts[node.name];
        fs.writeFileSync(path.join(node.host.root, "home", username, "public_html", "kept.txt"), `kept on ${node.name}\n`, { mode: 0o644 });
        runs[node.name] = await backUp(admin(), id);
        // The run is in the node's repository (its DATA_DIR, its password), the panel's has none.
        const snapshots = JSON.parse(
          execFileSync("restic", ["snapshots", "--no-lock", "--json", "--tag", `run:${runs[node.name]}`], {
            encoding: "utf8",
            env: { ...process.env, RESTIC_REPOSITORY: path.join(node.env.DATA_DIR, "backups"), RESTIC_PASSWORD_FILE: path.join(node.env.DATA_DIR, "backup-password") },
          }),
        ) as { tags: string[] }[];
        assert.deepEqual(snapshots.map((snapshot) => snapshot.tags.find((tag) => tag.startsWith("part:"))).sort(), ["part:home", "part:records"]);
        // Its success is recorded once the node has said what the run stored.
        await waitFor("its success in the status", async () => {
          const status = (await admin().get("/api/admin/backups")).body.accounts.find((account: { account_id: number }) => account.account_id === id);
          return status.last_success_at && status.snapshots === 1;
        });
      }
      assert.equal(fs.existsSync(path.join(env.database.env.DATA_DIR, "backups")), false, "nothing of the nodes' accounts in the panel's own repository");

      const { id, username } = accounts.n1;
      const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
      assert.deepEqual((await client.get("/api/client/backups")).body.snapshots.map((run: { id: string }) => run.id), [runs.n1]);
      const file = path.join(n1().host.root, "home", username, "public_html", "kept.txt");
      fs.rmSync(file);
      const restored = await client.post(`/api/client/backups/${runs.n1}/restore`, { path: "public_html/kept.txt" });
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      assert.equal(fs.readFileSync(file, "utf8"), "kept on n1\n");
      // Written by the account's own user, on its node.
      assert.equal(fs.statSync(file).uid, Number(n1().host.run("id", ["-u", username]).stdout));
      const refused = await admin().post(`/api/admin/accounts/${id}/restore`, { snapshot: runs.n1, path: "public_html/missing.txt" });
      assert.equal(refused.status, 422);
      assert.ok(refused.body.errors?.path, JSON.stringify(refused.body));
    });

    test("a backup while its node does not answer fails in the panel's words, naming the node; its list is a 503", async () => {
      const { id } = accounts.n1;
      const since = Date.now() - 1000;
      n1().agent!.kill("SIGSTOP");
      try {
        // Started once the run before has given the backup lease back.
        await waitFor("the backup started", async () => (await admin().post(`/api/admin/accounts/${id}/backups`)).status === 202);
        const status = await waitFor("the failure recorded", async () => {
          const line = (await admin().get("/api/admin/backups")).body.accounts.find((account: { account_id: number }) => account.account_id === id);
          return line?.last_failure_at && Date.parse(line.last_failure_at) >= since ? line : null;
        });
        assert.match(status.last_error, /the node n1 .*does not answer/i);
        const listed = await admin().get(`/api/admin/accounts/${id}/backups`);
        assert.equal(listed.status, 503, JSON.stringify(listed.body));
      } finally {
        n1().agent!.kill("SIGCONT");
      }
      await waitFor("n1 active again", async () => (await nodeRecord("n1")).state === "active");
    });

    test("an agent that stops in the middle of a backup: the panel gives up after 30 s without word of it, and lists no half run", async () => {
      const { id, username } = accounts.n1;
      const big = path.join(n1().host.root, "home", username, "public_html", "big.bin");
      execFileSync("head", ["-c", String(300 * 1024 * 1024), "/dev/urandom"], { stdio: ["ignore", fs.openSync(big, "w"), "ignore"] });
      const before = (await admin().get(`/api/admin/accounts/${id}/backups`)).body.snapshots;
      const since = Date.now() - 1000;
      await waitFor("the backup started", async () => (await admin().post(`/api/admin/accounts/${id}/backups`)).status === 202);
      await new Promise((resolve) => setTimeout(resolve, 500));
      n1().agent!.kill("SIGSTOP");
      try {
        const status = await waitFor(
          "the failure recorded",
          async () => {
            const line = (await admin().get("/api/admin/backups")).body.accounts.find((account: { account_id: number }) => account.account_id === id);
            return line?.last_failure_at && Date.parse(line.last_failure_at) >= since ? line : null;
          },
          60_000,
        );
        assert.match(status.last_error, /the node n1 stopped answering before it had finished/i);
        assert.ok(Date.now() - since >= 30_000, "not before 30 s of silence");
      } finally {
        n1().agent!.kill("SIGCONT");
        fs.rmSync(big);
      }
      await waitFor("n1 active again", async () => (await nodeRecord("n1")).state === "active");
      assert.deepEqual((await admin().get(`/api/admin/accounts/${id}/backups`)).body.snapshots, before, "the half run is no restore point");
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

    test("a terminated account comes back on the node whose repository holds its backups", async () => {
      const { username, domain } = accounts.n2;
      const listed = await admin().get(`/api/admin/backups/usernames/${username}?node=n2`);
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.equal(listed.body.snapshots.length, 1);
      assert.deepEqual((await admin().get(`/api/admin/backups/usernames/${username}`)).body.snapshots, [], "none in the panel's own repository");
      const restored = await admin().post("/api/admin/backups/restore-account", { username, node: "n2" });
      assert.equal(restored.status, 201, JSON.stringify(restored.body));
      assert.equal(restored.body.node, "n2");
      await waitFor("its file served by n2 again", async () => (await n2().visit(domain, "/kept.txt")).text === "kept on n2\n");
      const unknown = await admin().post("/api/admin/backups/restore-account", { username: "nosuchuser", node: "nowhere" });
      assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
    });
  });
}
