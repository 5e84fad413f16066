import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey } from "../support/seed";
import { freePort } from "../support/server";
import { removeLinuxUsers, startWebServers, systemUsersHostingEnv, visitSite, type WebServers } from "../support/web-servers";

// A proxied site reaches only its own account's application (docs/applications.md
// "Why a socket, not a port"; docs/security.md "A proxied site reaches only its own account's
// application"). The attacker is account B, acting as its own Linux user: it tries to publish on
// its domain a service it does not run (an internal HTTP service of the server on a loopback port,
// then on a unix socket; account A's application), and to take A's visitors while A's application
// is down. Every attempt ends in a refusal or a 502, never in the other service's answer; A's and
// B's own applications are served.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-proxy-"));
// nginx's workers and the accounts' processes walk from / to each home and to the app script.
fs.chmodSync(root, 0o755);
const createdUsers: string[] = [];
const INTERNAL = "the internal service's secret";
let servers: WebServers;
let hostingEnv: Record<string, string>;
let internalPort: number;
const internalSocket = path.join(root, "internal.sock");
const internalServers: http.Server[] = [];
// The accounts' application: an HTTP server on a unix socket it makes writable by its group (nginx's workers connect through it).
const appScript = path.join(root, "app.cjs");

before(async () => {
  servers = await startWebServers(root);
  hostingEnv = systemUsersHostingEnv(servers, root);
  internalPort = await freePort();
  for (const address of [internalPort, internalSocket]) {
    const server = http.createServer((_, res) => res.end(`${INTERNAL}\n`));
    await new Promise<void>((resolve) => (typeof address === "number" ? server.listen(address, "127.0.0.1", resolve) : server.listen(address, resolve)));
    internalServers.push(server);
  }
  // A local service any user may connect to (as MariaDB's socket is).
  fs.chmodSync(internalSocket, 0o666);
  fs.writeFileSync(
    appScript,
    [
      'const fs = require("node:fs");',
      "const [socket, text] = process.argv.slice(2);",
      'require("node:http").createServer((req, res) => res.end(`${text} saw ${req.headers.host}\\n`)).listen(socket, () => {',
      "  fs.chmodSync(socket, 0o660);",
      '  console.log("listening");',
      "});",
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
});

after(async () => {
  for (const server of internalServers) server.close();
  await servers?.stop();
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

/** The account's application, run as its Linux user (setpriv: the pid is node's own); resolves once it listens. */
function startApp(username: string, socket: string, text: string): Promise<ChildProcess> {
  const child = spawn("setpriv", ["--reuid", username, "--regid", username, "--init-groups", "/usr/bin/node", appScript, socket, text], {
    stdio: ["ignore", "pipe", "pipe"],
    cwd: "/",
  });
  let output = "";
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk) => (String(chunk).includes("listening") ? resolve(child) : (output += chunk)));
    child.stderr!.on("data", (chunk) => (output += chunk));
    child.on("exit", (code) => reject(new Error(`the application exited with ${code}: ${output}`)));
  });
}

async function stopApp(app: ChildProcess) {
  if (app.exitCode !== null || app.signalCode !== null) return;
  const exited = new Promise((resolve) => app.once("exit", resolve));
  app.kill("SIGTERM");
  await exited;
}

/** `script` run by /bin/sh as the account's Linux user, in its home; its exit status and output. */
function asCustomer(username: string, home: string, script: string) {
  const result = spawnSync("runuser", ["-u", username, "--", "/bin/sh", "-c", script], { encoding: "utf8", cwd: home });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** The answer once nginx answers `expected` (a reload may be under way), else the last one. */
async function visitUntil(host: string, expected: (answer: { status: number; text: string }) => boolean) {
  let last = { status: 0, text: "" };
  for (let attempt = 0; attempt < 50; attempt++) {
    last = await visitSite(servers, host, "/").catch(() => last);
    if (expected(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return last;
}

async function seed(db: Database) {
  return { adminKey: await makeKey(db, { scope: "admin" }) };
}

for (const backend of machineBackends("pglite")) {
  describe(`a proxied site reaches only its own account's application (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const suffix = randomBytes(3).toString("hex");
    const a = { username: `pa${suffix}`, id: 0, domainId: 0 };
    const b = { username: `pb${suffix}`, id: 0, domainId: 0 };
    const home = (username: string) => path.join(hostingEnv.HOME_ROOT, username);
    const site = (username: string) => `${username}.example`;
    const client = (account: { id: number }) => apiClient(env.server.baseUrl, env.seed.adminKey, account.id);
    const running: ChildProcess[] = [];

    before(async () => {
      createdUsers.push(a.username, b.username);
      env = await createEnvironment(backend, seed, hostingEnv);
      for (const account of [a, b]) {
        const created = await apiClient(env.server.baseUrl, env.seed.adminKey).post("/api/admin/accounts", { username: account.username, domain: site(account.username), plan: "default" });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        account.id = created.body.id;
        account.domainId = (await client(account).get("/api/client/domains")).body[0].id;
      }
    });
    after(async () => {
      for (const app of running) await stopApp(app);
      await env?.teardown();
    });

    test("the kernel's protection of links is on (the panel turns it on at start)", () => {
      assert.equal(fs.readFileSync("/proc/sys/fs/protected_symlinks", "utf8").trim(), "1");
    });

    test("each home has run/: root's, sticky, open to the account and nginx's workers through the home", () => {
      const stat = fs.statSync(path.join(home(a.username), "run"));
      assert.equal(stat.uid, 0);
      assert.equal(stat.mode & 0o7777, 0o1777);
    });

    test("A's application on its socket is served on A's domain", async () => {
      running.push(await startApp(a.username, path.join(home(a.username), "run", "app.sock"), "A's application"));
      const proxied = await client(a).put(`/api/client/domains/${a.domainId}`, { site_profile: "proxy", proxy_socket: "app.sock" });
      assert.equal(proxied.status, 200, JSON.stringify(proxied.body));
      assert.equal(proxied.body.proxy_socket, "app.sock");
      assert.equal((await visitUntil(site(a.username), (answer) => answer.status === 200)).text, `A's application saw ${site(a.username)}\n`);
    });

    test("B names a local port (the internal service's): refused, and its domain never answers with that service", async () => {
      for (const body of [
        { site_profile: "proxy", proxy_port: internalPort },
        { site_profile: "proxy", proxy_socket: "x.sock", proxy_port: internalPort },
      ]) {
        const refused = await client(b).put(`/api/client/domains/${b.domainId}`, body);
        assert.equal(refused.status, 422, JSON.stringify(refused.body));
        assert.match(refused.body.errors?.proxy_port?.[0] ?? "", /no longer supported/);
      }
      const created = await client(b).post("/api/client/domains", { domain: "peek", domain_type: "subdomain", parent_domain_id: b.domainId, site_profile: "proxy", proxy_port: internalPort });
      assert.equal(created.status, 422, JSON.stringify(created.body));
      for (const socket of ["../../../internal.sock", "/run/mysqld/mysqld.sock", "run/x.sock"]) {
        const outside = await client(b).put(`/api/client/domains/${b.domainId}`, { site_profile: "proxy", proxy_socket: socket });
        assert.equal(outside.status, 422, `${socket}: ${JSON.stringify(outside.body)}`);
        assert.ok(outside.body.errors?.proxy_socket, JSON.stringify(outside.body));
      }
      assert.ok(!(await visitSite(servers, site(b.username), "/")).text.includes(INTERNAL));
    });

    test("B's socket is a link to another socket (the internal service's, A's application's): nginx's workers are refused it (502), never their answer", async () => {
      const proxied = await client(b).put(`/api/client/domains/${b.domainId}`, { site_profile: "proxy", proxy_socket: "x.sock" });
      assert.equal(proxied.status, 200, JSON.stringify(proxied.body));
      for (const target of [internalSocket, path.join(home(a.username), "run", "app.sock")]) {
        const linked = asCustomer(b.username, home(b.username), `ln -sfn '${target}' run/x.sock`);
        assert.equal(linked.status, 0, linked.output);
        const answer = await visitUntil(site(b.username), (visit) => visit.status === 502 || visit.text.includes(INTERNAL) || visit.text.includes("A's application"));
        assert.equal(answer.status, 502, `${target}: ${answer.status} ${answer.text}`);
        for (const visit of [answer, await visitSite(servers, site(b.username), "/")]) {
          assert.ok(!visit.text.includes(INTERNAL) && !visit.text.includes("A's application"), `B published ${target}: ${visit.text}`);
        }
      }
      assert.equal(asCustomer(b.username, home(b.username), "rm run/x.sock").status, 0);
    });

    test("B's own application on its own socket is served on B's domain", async () => {
      running.push(await startApp(b.username, path.join(home(b.username), "run", "x.sock"), "B's application"));
      assert.equal((await visitUntil(site(b.username), (answer) => answer.status === 200)).text, `B's application saw ${site(b.username)}\n`);
    });

    test("while A's application is down, B cannot listen in its place: A's visitors get a 502, never B's answer", async () => {
      await stopApp(running.shift()!);
      const aSocket = path.join(home(a.username), "run", "app.sock");
      fs.rmSync(aSocket, { force: true });
      assert.equal((await visitUntil(site(a.username), (answer) => answer.status === 502)).status, 502, "A's site without its application");
      // B tries for a while, as an attacker waiting for A's application to go down would.
      for (let attempt = 0; attempt < 20; attempt++) {
        await assert.rejects(startApp(b.username, aSocket, "B caught A's visitor"), /EACCES|exited/);
        const answer = await visitSite(servers, site(a.username), "/");
        assert.ok(!answer.text.includes("B caught"), `B took A's traffic: ${answer.text}`);
      }
      assert.equal(fs.existsSync(aSocket), false);
    });
  });
}
