import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { accountMoves } from "@/db/schema";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { startNats, type TestNats } from "../support/nats";
import { makeKey } from "../support/seed";
import { linkNodes, startTestNode, type TestNode } from "../support/test-node";
import { waitFor } from "../support/wait";

// Issue 37, items 1, 2 and 5, on two namespace nodes with their own nginx (no PHP, no MariaDB: a
// marker file is the site): a visitor whose resolver still names the source — its requests go to
// n1's address with the domain's Host, every 0.2 s — gets the moved site's marker through the
// whole move: from n1 until the switch, then through n1's forward to n2 until the forward ends,
// never another site's page or an unknown host's answer; afterwards n1 answers as for a name it
// does not host. The zone's A record had 61 s: lowered to 60 when the move was queued, the switch
// began only once 61 s had passed (the copy ran meanwhile), the forward lasted 2 × 61 s, and the
// record has its 61 s back at the end. A second move, cancelled while it waits for the caches,
// gives its record's TTL back too. The only real waits of these rules in the suite (≥ 60 s each,
// by the records' lowest TTL): the rest is tests/api/move-dns.test.ts, with stand-in nodes.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-move-forward-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** Every node's nginx listens here: a forward reaches its target at the port it listens on itself. */
const HTTP_PORT = 80;
const OLD_TTL = 61;

/** A request to `node`'s address for `host`, as a visitor's browser pinned to that address makes it. */
function visit(node: TestNode, host: string, urlPath = "/") {
  return new Promise<{ status: number; text: string }>((resolve) => {
    const request = http.get({ host: node.host.address, port: HTTP_PORT, path: urlPath, headers: { host }, timeout: 5000 }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.on("timeout", () => request.destroy(new Error("timed out")));
    request.on("error", (error) => resolve({ status: 0, text: error.message }));
  });
}

for (const backend of machineBackends("postgres")) {
  describe(`a visitor with a cached address during a move (${backend})`, () => {
    let env: TestEnvironment<{ adminKey: Awaited<ReturnType<typeof makeKey>> }>;
    let nats: TestNats;
    const nodes: TestNode[] = [];
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const db = () => env.db as Database;
    const tag = backend.slice(0, 2);

    before(async () => {
      nats = await startNats(path.join(root, "nats"), "0.0.0.0");
      env = await createEnvironment(backend, async (seeded) => ({ adminKey: await makeKey(seeded, { scope: "admin" }) }), { ...nats.env, MOVE_REPOSITORY: path.join(root, "moves") });
      for (const name of ["n1", "n2"]) nodes.push(await startTestNode(name, { panelPort: env.server.port, admin: env.seed.adminKey, nats, httpPort: HTTP_PORT }));
      linkNodes(nodes[0], nodes[1]);
    });

    after(async () => {
      for (const node of nodes) await node.stop();
      await env?.teardown();
      await nats?.stop();
    });

    /** An account on n1 whose docroot holds its marker, its apex A record at `ttl`. */
    async function markedAccount(username: string, ttl: number) {
      const [n1] = nodes;
      const created = await admin().post("/api/admin/accounts", { username, domain: `${username}.example`, node: "n1" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const marker = `${username}'s own page`;
      const ran = n1.host.run("runuser", ["-u", username, "--", "sh", "-c", `echo "${marker}" > ${path.join(n1.host.root, "home", username, "public_html", "index.html")}`]);
      assert.equal(ran.code, 0, ran.stderr);
      const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
      const [domain] = (await client.get("/api/client/domains")).body;
      const records = (await client.get(`/api/client/dns-records?domain_id=${domain.id}`)).body as { id: number; type: string; name: string; ttl: number }[];
      const apex = records.find((record) => record.type === "A" && record.name === "@")!;
      if (ttl !== apex.ttl) assert.equal((await client.put(`/api/client/dns-records/${apex.id}`, { ttl })).status, 200);
      const apexTtl = async () => ((await client.get(`/api/client/dns-records?domain_id=${domain.id}`)).body as { id: number; ttl: number }[]).find((record) => record.id === apex.id)!.ttl;
      return { id: created.body.id as number, username, domain: `${username}.example`, marker, apexTtl };
    }

    const moveOf = async (accountId: number) => (await admin().get(`/api/admin/accounts/${accountId}`)).body.move;
    const moveReaches = (accountId: number, steps: string[], timeoutMs: number) =>
      waitFor(`the move of account ${accountId} to reach ${steps.join(" or ")}`, async () => {
        const move = await moveOf(accountId);
        return move && steps.includes(move.step) && move;
      }, timeoutMs);
    // The move's row beside the server: PostgreSQL only (PGlite's directory is the server's alone), where this file runs.
    const rowOf = async (accountId: number) => (env.db ? (await db().select().from(accountMoves).where(eq(accountMoves.accountId, accountId))).at(-1)! : null);

    test("pinned to the source's address, a visitor gets the moved site's page through the switch and the forward, then the source's answer for an unknown name; the switch waited for the old TTL, which is back at the end; a cancel while waiting gives its TTL back", async () => {
      const [n1, n2] = nodes;
      const site = await markedAccount(`fw${tag}`, OLD_TTL);
      const other = await markedAccount(`fc${tag}`, 3600);
      assert.equal((await visit(n1, site.domain)).text, `${site.marker}\n`);

      // The visitor: n1's address, every 0.2 s, with the step the move was at.
      const samples: { at: number; status: number; text: string; step: string }[] = [];
      let step = "-";
      let polling = true;
      const poller = (async () => {
        while (polling) {
          const tick = Date.now();
          const answer = await visit(n1, site.domain);
          samples.push({ at: tick, ...answer, step });
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, 200 - (Date.now() - tick))));
        }
      })();
      const stepper = (async () => {
        while (polling) {
          step = (await moveOf(site.id))?.step ?? step;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      })();

      const startedAt = Date.now();
      const started = await admin().post(`/api/admin/accounts/${site.id}/move`, { node: "n2" });
      assert.equal(started.status, 202, JSON.stringify(started.body));
      assert.equal(await site.apexTtl(), 60);
      const queued = await rowOf(site.id);
      if (queued) assert.deepEqual(Object.values(queued.recordTtls ?? {}), [OLD_TTL]);

      // The copy runs while the caches clear; then the switch waits, saying so, with n1 serving.
      const waiting = await moveReaches(site.id, ["switching"], 60_000);
      assert.match(waiting.waiting ?? "", /^waiting for DNS caches, \d+ s left$/);
      assert.equal(waiting.error, null);
      assert.equal(waiting.attempts, 0);
      assert.equal((await visit(n1, site.domain)).text, `${site.marker}\n`);

      // The other account waits for its caches too (its hour), and is cancelled meanwhile: its TTL comes back.
      const otherStarted = await admin().post(`/api/admin/accounts/${other.id}/move`, { node: "n2" });
      assert.equal(otherStarted.status, 202, JSON.stringify(otherStarted.body));
      assert.equal(await other.apexTtl(), 60);

      const forwarding = await moveReaches(site.id, ["forwarding"], 180_000);
      const switched = await rowOf(site.id);
      if (switched && queued) {
        assert.ok(switched.switchedAt!.getTime() >= switched.cachesClearAt!.getTime(), "switched before the caches had cleared");
        assert.ok(switched.cachesClearAt!.getTime() - queued.createdAt.getTime() >= OLD_TTL * 1000 - 1000, "the caches' time is shorter than the old TTL");
        assert.equal(switched.forwardUntil!.getTime() - switched.switchedAt!.getTime(), 2 * OLD_TTL * 1000);
      }
      // Whatever the backend: the switch (n1 held for the final pass) began only after the old TTL.
      const switching = (forwarding.steps as { step: string; started_at: string }[]).find((entry) => entry.step === "switching")!;
      assert.ok(Date.parse(switching.started_at) - startedAt >= OLD_TTL * 1000 - 1000, `the switch began ${Date.parse(switching.started_at) - startedAt} ms after the move was queued`);
      assert.match(forwarding.waiting ?? "", /^the source forwards to the target, \d+ s left$/);
      // Nothing of the account is left to read on n1: no user, no home; what it answers comes from n2.
      assert.notEqual(n1.host.run("id", ["-u", site.username]).code, 0);
      assert.equal(fs.existsSync(path.join(n1.host.root, "home", site.username)), false);
      const onlyOnN2 = n2.host.run("runuser", ["-u", site.username, "--", "sh", "-c", `echo "written on n2" > ${path.join(n2.host.root, "home", site.username, "public_html", "n2.txt")}`]);
      assert.equal(onlyOnN2.code, 0, onlyOnN2.stderr);
      assert.deepEqual(await visit(n1, site.domain, "/n2.txt"), { status: 200, text: "written on n2\n" });

      const otherWaiting = await moveReaches(other.id, ["switching"], 120_000);
      assert.match(otherWaiting.waiting ?? "", /^waiting for DNS caches/);
      assert.equal((await admin().delete(`/api/admin/accounts/${other.id}/move`)).status, 202);
      await moveReaches(other.id, ["cancelled"], 120_000);
      assert.equal(await other.apexTtl(), 3600);
      assert.equal((await visit(n1, other.domain)).text, `${other.marker}\n`);

      const done = await moveReaches(site.id, ["done"], 2 * OLD_TTL * 1000 + 60_000);
      assert.equal(done.error, null);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      polling = false;
      await Promise.all([poller, stepper]);

      // n1 answers for the name as for any it does not host; n2 serves it; the record's TTL is its own again.
      assert.deepEqual(await visit(n1, site.domain), { status: 404, text: "not hosted here\n" });
      assert.equal((await visit(n2, site.domain)).text, `${site.marker}\n`);
      assert.equal(await site.apexTtl(), OLD_TTL);

      // What the visitor got: the marker (from n1's copy, read-only during the final pass, then
      // through its forward), or n2's "suspended" through the forward while n2 started — never another page.
      const timeline = samples.map((sample) => `${sample.step}:${sample.status}`).filter((entry, index, all) => entry !== all[index - 1]);
      const forwardEnded = samples.findIndex((sample) => sample.status === 404);
      // Each ask stands for the time until the next: the time without a 200 is the sum of the non-200 asks' times (before the forward's end).
      const downMs = samples.slice(0, forwardEnded === -1 ? -1 : forwardEnded).reduce((sum, sample, index) => sum + (sample.status === 200 ? 0 : samples[index + 1].at - sample.at), 0);
      console.log(`[moves] the visitor pinned to n1: ${samples.length} asks, ${downMs / 1000} s without a 200 until the forward ended; ${timeline.join(" → ")}`);
      const throughMove = forwardEnded === -1 ? samples : samples.slice(0, forwardEnded);
      for (const sample of throughMove) {
        const right = (sample.status === 200 && sample.text === `${site.marker}\n`) || (sample.status === 503 && /suspended/.test(sample.text));
        assert.ok(right, `at step ${sample.step} n1 answered ${sample.status} ${sample.text.slice(0, 200)}`);
      }
      // From the forward on, only the marker, until the forward's end (the move's done).
      const firstForwarded = throughMove.findIndex((sample) => sample.step === "forwarding");
      assert.ok(firstForwarded > 0, "no ask while n1 forwarded");
      assert.deepEqual(throughMove.slice(firstForwarded).filter((sample) => sample.status !== 200), []);
      assert.ok(samples.slice(forwardEnded).every((sample) => sample.status === 404), "n1 served the name again after its forward ended");
    });
  });
}
