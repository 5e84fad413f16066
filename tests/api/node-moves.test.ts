import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { accountMoves } from "@/db/schema";
import { addPhpVersion } from "@/lib/php/service";
import { createReseller } from "@/lib/resellers/service";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient, call } from "../support/http";
import { startNats, type TestNats } from "../support/nats";
import { makeKey, seedActor } from "../support/seed";
import { startServer } from "../support/server";
import { linkNodes, startTestNode, type TestNode } from "../support/test-node";
import { waitFor } from "../support/wait";

// Accounts moving between two nodes (docs/nodes.md "Moving accounts"), each node a machine of its
// own on this one (tests/support/node-host.ts) with its own nginx, PHP-FPM and MariaDB: a
// WordPress site moved while its home page is asked for every 0.5 s at the address its zone
// points to, its files and database rows the same after; the target's agent killed in the
// middle (the move goes on when it is back, or is cancelled with the source serving and nothing
// left on the target); the panel, and NATS, restarted in the middle; a node with three accounts
// drained.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-node-moves-"));
// WordPress as a customer uploads it: Debian's copy with its links resolved, readable by every account's user.
const wordpress = path.join(root, "wordpress");

before(() => {
  fs.chmodSync(root, 0o755);
  execFileSync("cp", ["-rL", "/usr/share/wordpress", wordpress]);
  fs.rmSync(path.join(wordpress, "wp-config.php"));
  execFileSync("chmod", ["-R", "a+rX", wordpress]);
});

after(() => fs.rmSync(root, { recursive: true, force: true }));

/** How long a change waits for its node here: short, so a stopped agent is noticed quickly. */
const JOB_TIMEOUT_S = 6;
/** The home page is asked for this often while a site moves. */
const POLL_MS = 200;

/** A request to a node's nginx for `host`, as a visitor's browser makes it. */
function request(node: TestNode, host: string, urlPath: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<{ status: number; text: string; location?: string; via?: string }>((resolve, reject) => {
    const req = http.request(
      { host: node.host.address, port: node.servers.httpPort, path: urlPath, method: options.method ?? "GET", headers: { host, ...options.headers }, timeout: 20_000 },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text, location: response.headers.location, via: response.headers.via }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(options.body);
  });
}

/** Every file under the folder, by path: its SHA-256 and its owner's name on `node`. */
function filesOf(node: TestNode, folder: string): Map<string, string> {
  const names = new Map(
    fs
      .readFileSync(path.join(node.host.root, "etc", "passwd"), "utf8")
      .split("\n")
      .map((line) => line.split(":"))
      .map(([name, , uid]) => [Number(uid), name] as const),
  );
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) files.set(path.relative(folder, full), `${createHash("sha256").update(fs.readFileSync(full)).digest("hex")} ${names.get(fs.statSync(full).uid)}`);
    }
  };
  walk(folder);
  return files;
}

/** The database's rows as mariadb-dump writes them on `node` (no dates, rows in key order). */
/**
 * The database's rows as `mariadb-dump` writes them, one INSERT per row, but WordPress's
 * transients: caches a page view writes again once they expire (its global styles every minute).
 */
function databaseRows(node: TestNode, database: string): string {
  const dumped = node.host.run("mariadb-dump", ["--no-defaults", "-h", "127.0.0.1", "-u", "root", "--skip-dump-date", "--skip-comments", "--order-by-primary", "--no-create-info", "--skip-extended-insert", database]);
  assert.equal(dumped.code, 0, dumped.stderr);
  return dumped.stdout
    .split("\n")
    .filter((line) => !/^INSERT INTO `wp_options` VALUES \(\d+,'_(site_)?transient_/.test(line))
    .join("\n");
}

/** The rows only one of two dumps holds, for a message. */
function rowsDiffer(before: string, after: string): string {
  const [was, is] = [new Set(before.split("\n")), new Set(after.split("\n"))];
  return `gone: ${[...was].filter((row) => !is.has(row)).join("\n")}\nnew: ${[...is].filter((row) => !was.has(row)).join("\n")}`;
}

const seed = async (db: Database) => ({
  adminKey: await makeKey(db, { scope: "admin" }),
  resellerKey: await makeKey(db, { scope: "reseller", reseller_id: (await createReseller(db, { username: "res1" }, seedActor)).id }),
  php82: await addPhpVersion(db, { version: "8.2" }, seedActor),
});

for (const backend of machineBackends("postgres")) {
  describe(`accounts moving between nodes (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    let nats: TestNats;
    const nodes: TestNode[] = [];
    const [n1, n2] = [() => nodes[0], () => nodes[1]];
    const moveRepository = path.join(root, backend, "moves");
    let serverEnv: Record<string, string>;
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const account = async (id: number) => (await admin().get(`/api/admin/accounts/${id}`)).body;
    const tag = backend.slice(0, 2);

    before(async () => {
      nats = await startNats(path.join(root, backend, "nats"), "0.0.0.0");
      serverEnv = { ...nats.env, NODE_JOB_TIMEOUT_S: String(JOB_TIMEOUT_S), MOVE_REPOSITORY: moveRepository };
      // The measurement of docs/performance.md "Moves: time without the site" runs this file with each.
      if (process.env.MOVE_FINAL_PASS_SITES) serverEnv.MOVE_FINAL_PASS_SITES = process.env.MOVE_FINAL_PASS_SITES;
      env = await createEnvironment(backend, seed, serverEnv);
      for (const name of ["n1", "n2"]) {
        // One HTTP port on both (each its own network namespace): a source's forward asks the target on its own port.
        nodes.push(await startTestNode(name, { panelPort: env.server.port, admin: env.seed.adminKey, nats, mariadb: true, httpPort: 80 }));
      }
      linkNodes(nodes[0], nodes[1]);
    });

    // The panel a test restarts: the environment's teardown stops only the one it started.
    let restarted: Awaited<ReturnType<typeof startServer>> | null = null;

    after(async () => {
      for (const node of nodes) await node.stop();
      await restarted?.stop();
      await env?.teardown();
      await nats?.stop();
    });

    const nodeNamed = (name: string) => nodes.find((node) => node.name === name)!;

    /** An account on `node` whose public_html holds index.html saying so, and `extraMb` of random bytes. */
    async function hostedAccount(username: string, node: TestNode, extraMb = 0) {
      const created = await admin().post("/api/admin/accounts", { username, domain: `${username}.example`, node: node.name });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const publicHtml = path.join(node.host.root, "home", username, "public_html");
      const asUser = (script: string) => {
        const ran = node.host.run("runuser", ["-u", username, "--", "sh", "-c", script]);
        assert.equal(ran.code, 0, ran.stderr);
      };
      asUser(`echo "${username} is served" > ${publicHtml}/index.html`);
      await shortTtls(username);
      if (extraMb) asUser(`head -c ${extraMb * 1048576} /dev/urandom > ${publicHtml}/big.bin`);
      return { id: created.body.id as number, username, domain: `${username}.example`, publicHtml };
    }

    /**
     * The account's records at the short TTL already: its moves wait for no DNS cache (the wait
     * and the source's forward are tests/api/move-forward.test.ts's and move-dns.test.ts's).
     */
    async function shortTtls(username: string) {
      const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
      for (const domain of (await client.get("/api/client/domains")).body as { id: number }[]) {
        for (const record of (await client.get(`/api/client/dns-records?domain_id=${domain.id}`)).body as { id: number; type: string; ttl: number }[]) {
          if (record.type === "A" && record.ttl > 60) assert.equal((await client.put(`/api/client/dns-records/${record.id}`, { ttl: 60 })).status, 200);
        }
      }
    }

    /** The forward of each move that has reached it ends now: the source's two minutes are not waited for here. */
    async function endForwards() {
      // PostgreSQL, where this file runs; on PGlite (the server's directory alone) the forward's two minutes run out.
      await env.db?.update(accountMoves).set({ forwardUntil: new Date(Date.now() - 1000) }).where(eq(accountMoves.state, "forwarding"));
    }

    /** The move once it has ended (its forward cut short: endForwards). */
    async function moveEnds(accountId: number, timeoutMs: number, onForwarding: () => void = () => {}) {
      const reached = await moveReaches(accountId, ["forwarding", "done", "cancelled"], timeoutMs);
      if (reached.step !== "forwarding") return reached;
      onForwarding();
      await endForwards();
      return moveReaches(accountId, ["done", "cancelled"], env.db ? 60_000 : 240_000);
    }

    /** Starts the account's move to `target`: 202 with the move queued. */
    async function startMove(accountId: number, target: string) {
      const started = await admin().post(`/api/admin/accounts/${accountId}/move`, { node: target });
      assert.equal(started.status, 202, JSON.stringify(started.body));
      assert.equal(started.body.move.state, "queued");
      assert.equal(started.body.move.step, "queued");
      assert.equal(started.body.move.target, target);
      assert.equal(started.body.move.can_cancel, true);
      return started.body.move;
    }

    /** The move once its step is one of `steps`; past `timeoutMs`, an error showing the move as last read. */
    const moveReaches = async (accountId: number, steps: string[], timeoutMs = 120_000) => {
      let last: unknown = null;
      try {
        return await waitFor(`the move of account ${accountId} to reach ${steps.join(" or ")}`, async () => {
          const move = (last = (await account(accountId)).move);
          return move && steps.includes(move.step) && move;
        }, timeoutMs);
      } catch (error) {
        throw new Error(`${(error as Error).message}; the move: ${JSON.stringify(last)}`);
      }
    };

    /** Whether the account is gone from the node: no Linux user, no home, no site. */
    const goneFrom = async (node: TestNode, username: string) => {
      assert.notEqual(node.host.run("id", ["-u", username]).code, 0, `${username} is still a user of ${node.name}`);
      assert.equal(fs.existsSync(path.join(node.host.root, "home", username)), false, `${username}'s home is still on ${node.name}`);
      assert.equal((await node.visit(`${username}.example`, "/index.html")).status, 404);
    };

    test("a WordPress site moves to another node while its home page is asked at both nodes every 0.2 s: never served from two copies, its files and rows the same", async () => {
      const username = `wp${tag}`;
      const domain = `${username}.example`;
      const site = await hostedAccount(username, n1());
      const client = apiClient(env.server.baseUrl, env.seed.adminKey, username);
      const database = await client.post("/api/client/databases", { database_name: "wp" });
      assert.equal(database.status, 201, JSON.stringify(database.body));
      const user = await client.post("/api/client/database-users", { username: "wp", password: "wp-database-secret" });
      assert.equal(user.status, 201, JSON.stringify(user.body));
      const granted = await client.post(`/api/client/database-users/${user.body.id}/assign-database`, { database_id: database.body.id, privileges: ["ALL PRIVILEGES"] });
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
      const [main] = (await client.get("/api/client/domains")).body;
      assert.equal((await client.post("/api/client/account/configure-php", { domain_id: main.id, php_version_id: env.seed.php82.id })).status, 200);

      // WordPress put in place by the customer, with ~90 MB of uploads: a home of about 100 MB.
      const config = fs
        .readFileSync(path.join(wordpress, "wp-config-sample.php"), "utf8")
        .replace("database_name_here", database.body.database_name)
        .replace("username_here", user.body.username)
        .replace("password_here", "wp-database-secret")
        .replace("'localhost'", "'127.0.0.1'")
        .replace(
          "/* Add any custom values between this line and the \"stop editing\" line. */",
          // Debian's theme; and no WP-Cron on page views, so a visit writes no rows while the checksums are taken.
          "define( 'WP_DEFAULT_THEME', 'twentytwentyone' );\ndefine( 'DISABLE_WP_CRON', true );",
        );
      const configFile = path.join(root, backend, "wp-config.php");
      fs.writeFileSync(configFile, config, { mode: 0o644 });
      const copied = n1().host.run("runuser", ["-u", username, "--", "sh", "-c", `cp -r ${wordpress}/. ${site.publicHtml}/ && cp ${configFile} ${site.publicHtml}/wp-config.php && rm ${site.publicHtml}/index.html && mkdir -p ${site.publicHtml}/wp-content/uploads && head -c 94371840 /dev/urandom > ${site.publicHtml}/wp-content/uploads/archive.bin`]);
      assert.equal(copied.code, 0, copied.stderr);
      const installed = await request(n1(), domain, "/wp-admin/install.php?step=2", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ weblog_title: "A customer's blog", user_name: "admin", admin_password: "correct horse battery staple", admin_password2: "correct horse battery staple", pw_weak: "1", admin_email: "admin@example.com", blog_public: "0", language: "" }).toString(),
      });
      assert.equal(installed.status, 200, installed.text.slice(0, 1000));
      assert.match(installed.text, /Success!/);
      const home = await request(n1(), domain, "/");
      assert.equal(home.status, 200, home.text.slice(0, 500));
      assert.match(home.text, /A customer&#039;s blog|A customer's blog/);

      const filesBefore = filesOf(n1(), site.publicHtml);
      const rowsBefore = databaseRows(n1(), database.body.database_name);

      // The visitors: one asks the node the zone's A record names; two more, each pinned to one
      // node's address (a resolver's cached answer), ask it every 0.2 s with the domain's Host. An
      // answer serves the blog when it is a 200 with its title; it comes from the node's own copy
      // unless it carries the forward's Via.
      const samples: { at: number; pointsTo: string; status: number; location?: string; serves: boolean[]; ownCopy: boolean[]; step: string }[] = [];
      let forwardCutAt = Infinity;
      let polling = true;
      const poller = (async () => {
        while (polling) {
          const tick = Date.now();
          const [records, answers, moved] = await Promise.all([
            client.get(`/api/client/dns-records?domain_id=${main.id}`).then((answer) => answer.body as { type: string; name: string; content: string }[]),
            Promise.all(nodes.map((node) => request(node, domain, "/").catch(() => ({ status: 0, text: "", location: undefined, via: undefined })))),
            account(site.id),
          ]);
          const pointsTo = records.find((record) => record.type === "A" && record.name === "@")!.content;
          const serves = answers.map((answer) => answer.status === 200 && answer.text.includes("customer"));
          const pointed = nodes.findIndex((node) => node.host.address === pointsTo);
          samples.push({ at: tick, pointsTo, status: answers[pointed].status, location: answers[pointed].location, serves, ownCopy: answers.map((answer, index) => serves[index] && !answer.via), step: moved.move?.step ?? "-" });
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, POLL_MS - (Date.now() - tick))));
        }
      })();

      const moving = await startMove(site.id, "n2");
      assert.equal(moving.source, "n1");
      assert.equal(moving.holds_truth, "n1");
      // While it moves, the account waits for it: no suspend or terminate meanwhile.
      const suspend = await admin().post(`/api/admin/accounts/${site.id}/suspend`, {});
      assert.ok(suspend.status === 409 || (await account(site.id)).move.step === "done", JSON.stringify(suspend.body));
      const done = await moveEnds(site.id, 300_000, () => (forwardCutAt = Date.now())).catch((error) => {
        // What the panel's driver and the agents said, for the move that did not end.
        const lastLines = (text: string) => text.split("\n").slice(-40).join("\n");
        console.log(`[moves] the panel:\n${lastLines(env.server.output())}\n${nodes.map((node) => `[moves] ${node.name}'s agent:\n${lastLines(node.agentLog())}`).join("\n")}`);
        throw error;
      });
      await new Promise((resolve) => setTimeout(resolve, 2 * POLL_MS));
      polling = false;
      await poller;
      // What the visitors saw, each change with its time; the move's steps as GET .../move answers
      // them; the driver's lines (the switch's laps, failed attempts): printed before any assertion.
      // Each ask stands for the time until the next one: the time without a 200 is the sum of the non-200 asks' times.
      const downMs = samples.slice(0, -1).reduce((sum, sample, index) => sum + (sample.status === 200 ? 0 : samples[index + 1].at - sample.at), 0);
      // The worst gap at a node's address: the longest time from an ask that did not get the blog to the next that did —
      // at the source (n1) until its forward was cut short, at the target (n2) from the first time it served (the zone
      // names n2 only after that: the switch commits once n2 serves).
      const worstGap = (index: number, asks: typeof samples) => {
        let [worst, since] = [0, null as number | null];
        for (const sample of asks) {
          if (!sample.serves[index]) since ??= sample.at;
          else if (since !== null) [worst, since] = [Math.max(worst, sample.at - since), null];
        }
        return since === null ? worst : Infinity;
      };
      const atSource = worstGap(0, samples.filter((sample) => sample.at < forwardCutAt));
      const firstAtTarget = samples.findIndex((sample) => sample.serves[1]);
      const atTarget = firstAtTarget < 0 ? Infinity : worstGap(1, samples.slice(firstAtTarget));
      const timeline = samples
        .map((sample) => ({ at: sample.at, entry: `${sample.step}:${sample.status}${sample.location ? ` (to ${sample.location})` : ""}` }))
        .filter((sample, index, all) => sample.entry !== all[index - 1]?.entry)
        .map((sample) => `${sample.entry} (${new Date(sample.at).toISOString().slice(11, 23)})`);
      console.log(`[moves] ${backend}: ${samples.length} asks of the home page over ${(samples.at(-1)!.at - samples[0].at) / 1000} s, ${downMs / 1000} s without a 200 at the zone's address; ${timeline.join(" → ")}`);
      console.log(`[moves] ${backend}: the worst gap at n1's address (the source) ${atSource / 1000} s, at n2's (the target) ${atTarget / 1000} s`);
      const answered = await admin().get(`/api/admin/accounts/${site.id}/move`);
      assert.equal(answered.status, 200, JSON.stringify(answered.body));
      const steps = answered.body.move.steps as { step: string; started_at: string; ended_at: string | null }[];
      const seconds = (from: string, to: string | null) => (to ? ((Date.parse(to) - Date.parse(from)) / 1000).toFixed(2) : "…");
      console.log(`[moves] ${backend}: steps ${steps.map((step) => `${step.step} ${step.started_at.slice(11, 23)} +${seconds(step.started_at, step.ended_at)} s`).join(", ")}`);
      console.log(env.server.output().split("\n").filter((line) => line.startsWith("[moves]")).join("\n"));

      assert.equal(done.step, "done", JSON.stringify(done));
      assert.equal(done.state, "done");
      assert.equal(done.holds_truth, "n2");
      assert.equal(done.error, null);

      const moved = await account(site.id);
      assert.equal(moved.node, "n2");
      assert.equal(samples.at(-1)!.pointsTo, n2().host.address);
      assert.equal(samples.at(-1)!.status, 200);
      assert.equal(samples.filter((sample) => sample.ownCopy.every(Boolean)).length, 0, "two nodes served the site from their own copies at once");
      assert.ok(samples.some((sample) => sample.serves[0] && !sample.ownCopy[0]), "n1 forwarded to n2 after the switch");
      // Its steps (as the account's `move` says too): in the order they ran, each ended before the next began.
      assert.deepEqual(answered.body.move, moved.move);
      assert.deepEqual(steps.map((step) => step.step).filter((step) => step !== "forwarding"), ["queued", "preparing", "copying", "switching", "cleaning"]);
      const times = steps.flatMap((step) => [Date.parse(step.started_at), Date.parse(step.ended_at ?? "")]);
      assert.ok(times.every((time, index) => !Number.isNaN(time) && (index === 0 || times[index - 1] <= time)), JSON.stringify(steps));
      assert.ok(downMs < 30_000, `${downMs} ms without a 200`);
      assert.ok(atSource < 30_000 && atTarget < 30_000, `the worst gaps: ${atSource} ms at n1, ${atTarget} ms at n2`);

      // The same files, owned by the account's user on n2; the same rows; the same password for the database user.
      assert.deepEqual(filesOf(n2(), path.join(n2().host.root, "home", username, "public_html")), filesBefore);
      const rowsAfter = databaseRows(n2(), database.body.database_name);
      assert.ok(rowsAfter === rowsBefore, rowsDiffer(rowsBefore, rowsAfter));
      const login = n2().host.run("mariadb", ["--no-defaults", "-h", "127.0.0.1", "-u", user.body.username, "-pwp-database-secret", database.body.database_name, "-e", "SELECT COUNT(*) FROM wp_posts"]);
      assert.equal(login.code, 0, login.stderr);
      // Nothing of it left on n1, nor of the move's repository.
      await goneFrom(n1(), username);
      assert.equal(n1().host.run("mariadb", ["--no-defaults", "-h", "127.0.0.1", "-u", "root", "-e", `USE ${database.body.database_name}`]).code === 0, false, "the database is still on n1");
      assert.deepEqual(fs.existsSync(moveRepository) ? fs.readdirSync(moveRepository) : [], []);
      // It is an ordinary account of n2 again.
      const suspended = await admin().post(`/api/admin/accounts/${site.id}/suspend`, {});
      assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
      assert.equal((await request(n2(), domain, "/")).status, 503);
      assert.equal((await admin().post(`/api/admin/accounts/${site.id}/unsuspend`)).status, 200);
      // GET .../move is an admin operation: 401 without a key, 403 for a reseller's; 404 for an account that never moved, or none.
      assert.equal((await call(env.server.baseUrl, "GET", `/api/admin/accounts/${site.id}/move`)).status, 401);
      assert.equal((await apiClient(env.server.baseUrl, env.seed.resellerKey).get(`/api/admin/accounts/${site.id}/move`)).status, 403);
      const stayed = await admin().post("/api/admin/accounts", { username: `stay${tag}`, domain: `stay${tag}.example`, node: "n2" });
      assert.equal(stayed.status, 201, JSON.stringify(stayed.body));
      const none = await admin().get(`/api/admin/accounts/${stayed.body.id}/move`);
      assert.equal(none.status, 404);
      assert.equal(typeof none.body.error, "string");
      assert.equal((await admin().get("/api/admin/accounts/2147483647/move")).status, 404);
    });

    test("the target's agent killed in the middle of a move: the move waits, and goes on when it is back", async () => {
      const site = await hostedAccount(`kill${tag}`, n1(), 150);
      await startMove(site.id, "n2");
      await moveReaches(site.id, ["copying", "switching"]);
      await n2().stopAgent();
      const waiting = await moveReaches(site.id, ["copying", "switching"]).then(() =>
        waitFor("the move to say what it waits for", async () => {
          const move = (await account(site.id)).move;
          return move.error && move;
        }, 120_000),
      );
      assert.ok(["copying", "switching"].includes(waiting.step), JSON.stringify(waiting));
      assert.equal(waiting.state, "running");
      // The source serves all the while (a switch that failed has brought it back).
      await waitFor("n1 serving", async () => (await n1().visit(site.domain, "/index.html")).status === 200, 60_000);
      n2().startAgent();
      const done = await moveEnds(site.id, 300_000);
      assert.equal(done.state, "done", JSON.stringify(done));
      assert.equal((await account(site.id)).node, "n2");
      assert.equal((await n2().visit(site.domain, "/index.html")).text, `${site.username} is served\n`);
      assert.equal(fs.statSync(path.join(n2().host.root, "home", site.username, "public_html", "big.bin")).size, 150 * 1048576);
      await goneFrom(n1(), site.username);
    });

    test("a move cancelled while its target's agent is down: the source serves all along, nothing is left on the target", async () => {
      const site = await hostedAccount(`cancel${tag}`, n1(), 150);
      await startMove(site.id, "n2");
      await moveReaches(site.id, ["copying", "switching"]);
      await n2().stopAgent();
      const cancelled = await admin().delete(`/api/admin/accounts/${site.id}/move`);
      assert.equal(cancelled.status, 202, JSON.stringify(cancelled.body));
      assert.equal(cancelled.body.move.step, "cancelling");
      assert.equal(cancelled.body.move.state, "cancelling");
      assert.equal(cancelled.body.move.can_cancel, false);
      assert.equal((await admin().delete(`/api/admin/accounts/${site.id}/move`)).status, 409);
      await waitFor("n1 serving", async () => (await n1().visit(site.domain, "/index.html")).status === 200, 60_000);
      n2().startAgent();
      const ended = await moveReaches(site.id, ["cancelled"], 180_000);
      assert.equal(ended.holds_truth, "n1");
      assert.equal((await account(site.id)).node, "n1");
      assert.equal((await n1().visit(site.domain, "/index.html")).text, `${site.username} is served\n`);
      await goneFrom(n2(), site.username);
      assert.deepEqual(fs.existsSync(moveRepository) ? fs.readdirSync(moveRepository) : [], []);
      // No open move: DELETE is a 404; a move to its own node a 422; to a node that does not exist a 422.
      assert.equal((await admin().delete(`/api/admin/accounts/${site.id}/move`)).status, 404);
      assert.equal((await admin().post(`/api/admin/accounts/${site.id}/move`, { node: "n1" })).status, 422);
      assert.equal((await admin().post(`/api/admin/accounts/${site.id}/move`, { node: "nowhere" })).status, 422);
      assert.equal((await admin().post(`/api/admin/accounts/${site.id}/move`, {})).status, 422);
    });

    test("the panel restarted in the middle of a move: the move goes on", async () => {
      const site = await hostedAccount(`restart${tag}`, n2(), 150);
      await startMove(site.id, "n1");
      await moveReaches(site.id, ["copying"]);
      await env.server.stop();
      restarted = await startServer({ ...env.database.env, ...serverEnv });
      env.server = restarted;
      const done = await moveEnds(site.id, 300_000);
      assert.equal(done.state, "done", JSON.stringify(done));
      assert.equal((await account(site.id)).node, "n1");
      assert.equal((await n1().visit(site.domain, "/index.html")).text, `${site.username} is served\n`);
      await goneFrom(n2(), site.username);
    });

    test("NATS restarted in the middle of a move: the move goes on", async () => {
      const site = await hostedAccount(`nats${tag}`, n1(), 150);
      await startMove(site.id, "n2");
      await moveReaches(site.id, ["copying"]);
      await nats.restart();
      const done = await moveEnds(site.id, 300_000);
      assert.equal(done.state, "done", JSON.stringify(done));
      assert.equal((await account(site.id)).node, "n2");
      assert.equal((await n2().visit(site.domain, "/index.html")).text, `${site.username} is served\n`);
      await goneFrom(n1(), site.username);
    });

    test("draining a node moves its three accounts to another, one after another", async () => {
      const n1Id = n1().id;
      for (const index of [1, 2, 3]) await hostedAccount(`drain${tag}${index}`, n1());
      const onN1 = (await admin().get("/api/admin/accounts")).body.filter((record: { node: string }) => record.node === "n1");
      const drained = await admin().post(`/api/admin/nodes/${n1Id}/drain`, { to: "n2" });
      assert.equal(drained.status, 202, JSON.stringify(drained.body));
      assert.equal(drained.body.moves.filter((move: { step: string }) => move.step === "queued").length, onN1.length);
      assert.equal((await admin().get(`/api/admin/nodes/${n1Id}`)).body.state, "draining");
      // A draining node takes no accounts.
      assert.equal((await admin().post("/api/admin/accounts", { username: `late${tag}`, domain: `late${tag}.example`, node: "n1" })).status, 422);
      let moving = 0;
      const moves = await waitFor(
        "the drain to end",
        async () => {
          const { moves: list } = (await admin().get(`/api/admin/nodes/${n1Id}/moves`)).body as { moves: { state: string; step: string; account: string }[] };
          if (list.some((move) => move.step === "forwarding")) await endForwards();
          // A move that only forwards holds back no other (lib/moves/driver.ts advanceMoves).
          moving = Math.max(moving, list.filter((move) => move.state === "running" && move.step !== "forwarding").length);
          return list.every((move) => move.state === "done" || move.state === "cancelled") && list;
        },
        600_000,
      );
      assert.equal(moving, 1, "one account moved at a time");
      for (const record of onN1) {
        assert.equal(moves.findLast((move) => move.account === record.username)?.state, "done");
        assert.equal((await account(record.id)).node, "n2");
      }
      for (const index of [1, 2, 3]) {
        const username = `drain${tag}${index}`;
        assert.equal((await nodeNamed("n2").visit(`${username}.example`, "/index.html")).text, `${username} is served\n`);
        await goneFrom(n1(), username);
      }
    });
  });
}
