import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createPrivateKey, X509Certificate } from "node:crypto";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import type { TLSSocket } from "node:tls";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { nodeJobs } from "@/db/schema";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { backUp } from "../support/backups";
import { apiClient } from "../support/http";
import { startNats, type TestNats } from "../support/nats";
import { type Pebble, startPebble } from "../support/pebble";
import { makeKey } from "../support/seed";
import { freePort } from "../support/server";
import { startTestNode, type TestNode } from "../support/test-node";
import { waitFor } from "../support/wait";

// Accounts on two hosting servers (docs/nodes.md "Tests and benchmarks"). Each test node is a
// machine of its own on this one (tests/support/node-host.ts: its own network namespace and
// address, its own /etc with its own users), running its own nginx and PHP-FPM and the panel's
// agent, enrolled through the API and `panel node join`; the panel and the NATS server stay
// outside. A site is asked for at its node's address, as a visitor's browser would. A CA (pebble) validates the nodes' sites at
// their addresses, on the one HTTP port every node's nginx listens on (each in its own network).

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-nodes-hosting-"));
let pebble: Pebble;
let nodesHttpPort: number;

before(async () => {
  nodesHttpPort = await freePort();
  pebble = await startPebble({ httpPort: nodesHttpPort });
});

after(async () => {
  await pebble?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

/**
 * How long a change waits for its node in these tests before answering 503 (or 202): short, so the
 * tests of a silent node are quick, yet above what a node that answers takes on a loaded CI
 * machine (3 s once failed an account's creation while another build ran).
 */
const JOB_TIMEOUT_S = 6;

const seed = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });

/** What a node's nginx answers over HTTPS (port 443 of its own network) for `name`, verified against the CA's root. */
function visitSecure(node: TestNode, name: string): Promise<{ status: number; text: string; certificate: X509Certificate }> {
  return new Promise((resolve, reject) => {
    const options = { host: node.host.address, port: 443, path: "/index.html", headers: { host: name }, servername: name, ca: pebble.issuanceRoot, agent: false, timeout: 5000 };
    const request = https.get(options, (response) => {
      const certificate = new X509Certificate((response.socket as TLSSocket).getPeerCertificate().raw);
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text, certificate }));
    });
    request.on("timeout", () => request.destroy(new Error("timed out")));
    request.on("error", reject);
  });
}

const namesOf = (certificate: X509Certificate) => (certificate.subjectAltName ?? "").split(", ").map((name) => name.replace(/^DNS:/, "")).sort();

for (const backend of machineBackends("postgres")) {
  describe(`accounts on two nodes (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    // A NATS server of each suite's own: the other backend's nodes have the same names, and a job
    // its agent had taken when it was stopped would hold their consumer (one job at a time) until
    // JetStream gave it out again.
    let nats: TestNats;
    const nodes: TestNode[] = [];
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const nodeRecord = async (name: string) => (await admin().get("/api/admin/nodes")).body.nodes.find((node: { name: string }) => node.name === name);

    const panelCerts = path.join(root, backend, "panel-certs");

    before(async () => {
      // Every address: the nodes reach it over their veth pairs.
      nats = await startNats(path.join(root, backend, "nats"), "0.0.0.0");
      env = await createEnvironment(backend, seed, {
        ...nats.env,
        NODE_JOB_TIMEOUT_S: String(JOB_TIMEOUT_S),
        // The panel's ACME account; the panel has no web server of its own: the nodes serve the sites.
        ACME_DIRECTORY_URL: pebble.directoryUrl,
        ACME_CA_BUNDLE: pebble.listenerCaPath,
        CERTS_DIR: panelCerts,
      });
      for (const name of ["n1", "n2"]) {
        nodes.push(await startTestNode(name, { panelPort: env.server.port, admin: env.seed.adminKey, nats, httpPort: nodesHttpPort }));
      }
    });

    after(async () => {
      for (const node of nodes) await node.stop();
      await env?.teardown();
      await nats?.stop();
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
      // Its agent, busy ending the stopped run once it runs again, may answer the list after the
      // job's time: a 503 then (a test run under load saw one), and the list once it answers.
      let answer: { status: number; body: { snapshots?: unknown } } | null = null;
      const listed = await waitFor("n1 to list the account's restore points", async () => {
        answer = await admin().get(`/api/admin/accounts/${id}/backups`);
        return answer.status === 200 ? answer.body.snapshots : null;
      }).catch((error: Error) => assert.fail(`${error.message}; its last answer: ${JSON.stringify(answer)}`));
      assert.deepEqual(listed, before, "the half run is no restore point");
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
      const { id, username, domain } = accounts.n1;
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
      // The job n1 had taken is dropped past its expiry, and the account's reconcile queued after
      // it (its node_sync pending until then) keeps it as the database says. n1 runs its jobs one
      // at a time, in order: once it has measured the home for a request sent now, the stale job
      // is behind it — without that, the 404 below could come before n1 even looked at the job.
      await waitFor("the account's reconcile on n1", async () => (await admin().get(`/api/admin/accounts/${id}`)).body.node_sync === "ok");
      const usage = await client.get("/api/client/account/usage-details");
      assert.equal(typeof usage.body.disk?.used_mb, "number", `n1 measured the home after the stale job: ${JSON.stringify(usage.body)}`);
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

    /** A metrics read of node `node` past its cache (POST /api/metrics/clear-cache?node=). */
    const freshMetrics = async (what: string, node: string) => {
      const cleared = await admin().post(`/api/metrics/clear-cache?node=${node}`, { clear_stats: true, clear_system_info: true, clear_service_history: true });
      assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
      return admin().get(`/api/metrics/${what}${what.includes("?") ? "&" : "?"}node=${node}`);
    };

    test("metrics with ?node=: the node's samples and its live system; an unknown node 404, a bad name 422", async () => {
      // n1's agent sent a sample when it started: its history, stats and services are n1's.
      const history = await waitFor("n1's first sample", async () => {
        const answer = await freshMetrics("history", "n1");
        return answer.status === 200 && answer.body.length > 0 && answer.body;
      });
      assert.ok(history.every((record: { ram_total_mb: number }) => record.ram_total_mb > 0));
      const panelIds = new Set((await admin().get("/api/metrics/history?limit=100")).body.map((record: { id: number }) => record.id));
      assert.ok(history.every((record: { id: number }) => !panelIds.has(record.id)), "the panel's own samples are not n1's");
      const stats = await admin().get("/api/metrics/stats?node=n1");
      assert.equal(stats.status, 200, JSON.stringify(stats.body));
      assert.ok(stats.body.ram.average > 0 && stats.body.cpu_cores.length > 0);
      const services = await admin().get("/api/metrics/service-history?node=n1");
      assert.equal(services.status, 200);
      // The agent is the panel's process on a node.
      assert.ok(services.body.some((record: { service_name: string }) => record.service_name === "panel"), JSON.stringify(services.body));

      // Its system is read on it: its network, not the panel's.
      const info = await admin().get("/api/metrics/system-info?node=n1");
      assert.equal(info.status, 200, JSON.stringify(info.body));
      const addresses = (body: { networkInterfaces: { addresses: { address: string }[] }[] }) =>
        body.networkInterfaces.flatMap((entry) => entry.addresses.map((address) => address.address));
      assert.ok(addresses(info.body).includes(n1().host.address));
      const panelInfo = await admin().get("/api/metrics/system-info");
      assert.ok(!addresses(panelInfo.body).includes(n1().host.address));
      assert.deepEqual((await admin().get("/api/metrics/system-info?node=local")).body, panelInfo.body);

      const unknown = await admin().get("/api/metrics/stats?node=nowhere");
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error, "Node not found");
      const bad = await admin().get("/api/metrics/history?node=N%201;");
      assert.equal(bad.status, 422);
      assert.ok(bad.body.errors.node);
    });

    test("a node that does not answer: its account still shown (sending counts unknown), its system info 503 with Retry-After naming it, its recorded history served; the reads queue nothing for it", async () => {
      const { id } = accounts.n1;
      // The node's jobs are read beside the server: on PostgreSQL (TEST_EVERY_BACKEND runs PGlite too, without this check).
      const reconcilesOf = async () => (env.db ? (await env.db.select().from(nodeJobs).where(eq(nodeJobs.accountId, id))).filter((job) => job.kind === "reconcile").length : 0);
      const reconcilesBefore = await reconcilesOf();
      n1().agent!.kill("SIGSTOP");
      try {
        // The account's `mail` asks n1 for its sending counts, and waits NODE_JOB_TIMEOUT_S for them.
        const shown = await admin().get(`/api/admin/accounts/${id}`);
        assert.equal(shown.status, 200, JSON.stringify(shown.body));
        assert.equal(shown.body.mail.sent_last_hour, null);
        assert.equal(shown.body.mail.sent_today, null);
        const silent = await freshMetrics("system-info", "n1");
        assert.equal(silent.status, 503, JSON.stringify(silent.body));
        assert.match(silent.body.error, /\bn1\b/);
        assert.ok(Number(silent.headers.get("retry-after")) > 0);
        const history = await freshMetrics("history", "n1");
        assert.equal(history.status, 200);
        assert.ok(history.body.length > 0);
        // A change the node missed is reconciled; a read changed nothing there, so none is queued
        // (the account's read went unanswered NODE_JOB_TIMEOUT_S before this).
        assert.equal(await reconcilesOf(), reconcilesBefore);
      } finally {
        n1().agent!.kill("SIGCONT");
      }
      await waitFor("n1 active again", async () => (await nodeRecord("n1")).state === "active");
    });

    test("AutoSSL on a node: its nginx answers the challenges, its key is made there, its sites are served over HTTPS", async () => {
      const { username, domain } = accounts.n1;
      const names = [domain, `www.${domain}`, `blog.${domain}`];
      for (const name of names) await pebble.resolve(name, n1().host.address);
      const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
      assert.equal((await client.put("/api/client/account", { is_auto_ssl_enabled: true })).status, 200);
      const settled = async () => {
        const domains: { domain: string; ssl: { status: string; error: string | null; expires_at: string | null } }[] = (await client.get("/api/client/domains")).body;
        return domains.every((row) => row.ssl.status !== "pending") && domains;
      };
      const domains = await waitFor("the certificates issued", settled);
      for (const row of domains) assert.equal(row.ssl.status, "active", `${row.domain}: ${row.ssl.error}`);

      const served = await waitFor("the site over HTTPS", async () => {
        const answer = await visitSecure(n1(), domain);
        return answer.status === 200 && answer;
      });
      assert.equal(served.text, `served by n1\n`);
      assert.deepEqual(namesOf(served.certificate), [domain, `www.${domain}`].sort());
      // Recorded centrally as issued.
      assert.equal(domains.find((row) => row.domain === domain)!.ssl.expires_at, new Date(served.certificate.validTo).toISOString());
      // Its key is n1's (0600), made there: the panel keeps only its ACME account.
      const keyFile = path.join(n1().env.DATA_DIR, "certs", domain, "privkey.pem");
      assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
      assert.ok(served.certificate.checkPrivateKey(createPrivateKey(fs.readFileSync(keyFile))));
      assert.equal(fs.existsSync(path.join(n1().env.DATA_DIR, "certs", domain, "request.key")), false);
      assert.deepEqual(fs.readdirSync(panelCerts), [".acme"]);
      // The challenges answered are gone from n1.
      assert.deepEqual(fs.readdirSync(path.join(n1().env.ACME_CHALLENGE_DIR, ".well-known", "acme-challenge")), []);
      // The subdomain's own certificate, its site rewritten after it was recorded.
      const blog = await waitFor("the subdomain over HTTPS", async () => (await visitSecure(n1(), `blog.${domain}`)).certificate);
      assert.deepEqual(namesOf(blog), [`blog.${domain}`]);
    });

    test("AutoSSL on a node: a parked name added later is on the certificate issued again there", async () => {
      const { username, domain } = accounts.n1;
      const parked = `${username}-parked.example`;
      await pebble.resolve(parked, n1().host.address);
      const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
      const [main] = (await client.get("/api/client/domains")).body;
      const keyFile = path.join(n1().env.DATA_DIR, "certs", domain, "privkey.pem");
      const keyBefore = fs.readFileSync(keyFile, "utf8");
      const created = await client.post("/api/client/domains", { domain: parked, domain_type: "parked", parked_on_domain_id: main.id });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const served = await waitFor("the parked name on the certificate", async () => {
        const answer = await visitSecure(n1(), parked);
        return namesOf(answer.certificate).includes(parked) && answer;
      });
      assert.deepEqual(namesOf(served.certificate), [parked, domain, `www.${domain}`].sort());
      assert.equal(served.text, `served by n1\n`);
      // A new key, made on n1 for the new certificate.
      assert.notEqual(fs.readFileSync(keyFile, "utf8"), keyBefore);
      assert.ok(served.certificate.checkPrivateKey(createPrivateKey(fs.readFileSync(keyFile))));
      await waitFor("the parked name active", async () => {
        const rows: { domain: string; ssl: { status: string } }[] = (await client.get("/api/client/domains")).body;
        return rows.find((row) => row.domain === parked)?.ssl.status === "active";
      });
    });
  });
}
