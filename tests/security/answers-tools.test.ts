import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient, call } from "../support/http";
import { makeKey } from "../support/seed";
import { removeLinuxUsers } from "../support/web-servers";

// What a tool prints is the server's business: nginx -t names the files and lines of every site on
// the server, crontab and useradd name users, groups and files. A customer who provokes a refusal
// gets the panel's own words naming the field; the tool's go to the panel's log. And a cron job's
// command reaches sh exactly as written, whatever `%` and `\` it holds, by cron's own reading of
// the line (the real cron daemon runs it).

const [backend] = machineBackends("pglite");
const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-answers-"));
fs.chmodSync(root, 0o755);
const seed = async (db: Parameters<Parameters<typeof createEnvironment>[1]>[0]) => ({ adminKey: await makeKey(db, { scope: "admin" }) });

after(() => fs.rmSync(root, { recursive: true, force: true }));

describe(`nginx -t's words stay in the log (${backend})`, () => {
  // A test command that refuses, naming another customer's file as nginx would.
  const refusing = path.join(root, "nginx-t");
  const NGINX_WORDS = 'nginx: [emerg] unknown directive "evil" in /srv/sites/other-customer.example.conf:3';
  let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
  before(async () => {
    fs.writeFileSync(refusing, `#!/bin/sh\necho '${NGINX_WORDS}' >&2\nexit 1\n`, { mode: 0o755 });
    env = await createEnvironment(backend, seed, {
      WEB_SERVER: "nginx",
      HOME_ROOT: path.join(root, "nginx-homes"),
      NGINX_SITES_DIR: path.join(root, "sites"),
      NGINX_TEST_COMMAND: refusing,
      NGINX_RELOAD_COMMAND: "true",
      NGINX_PID_FILE: "/dev/null",
      PHP_FPM_POOL_DIR: path.join(root, "pools", "{version}"),
      PHP_FPM_SOCKET_DIR: path.join(root, "run"),
    });
  });
  after(async () => {
    await env?.teardown();
  });

  test("a refused site answers 422 in the panel's words; nginx's (another account's file) are in the log only", async () => {
    const refused = await call(env.server.baseUrl, "POST", "/api/admin/accounts", {
      credentials: env.seed.adminKey,
      body: { username: "refused", domain: "refused.example" },
    });
    assert.equal(refused.status, 422);
    const text = JSON.stringify(refused.body);
    assert.match(refused.body.error, /web server refused the new configuration/);
    for (const word of ["other-customer", "emerg", "evil", "/srv"]) assert.ok(!text.includes(word), `${word} in ${text}`);
    assert.ok(env.server.output().includes(NGINX_WORDS), "the log has nginx's words");
  });
});

describe(`cron: crontab's words stay in the log, and a command reaches sh as written (${backend})`, () => {
  const username = `ca${randomBytes(4).toString("hex")}`;
  const home = path.join(root, "homes", username);
  let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
  let cron: ChildProcess | null = null;
  let accountId: number;
  before(async () => {
    env = await createEnvironment(backend, seed, { SYSTEM_USERS: "1", HOME_ROOT: path.join(root, "homes") });
    // cron reads the accounts' crontabs; started here when the machine runs none.
    if (spawnSync("pgrep", ["-x", "cron"]).status !== 0) cron = spawn("/usr/sbin/cron", ["-f"], { stdio: "ignore" });
    const created = await apiClient(env.server.baseUrl, env.seed.adminKey).post("/api/admin/accounts", { username, domain: `${username}.example` });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    accountId = created.body.id;
  });
  after(async () => {
    cron?.kill("SIGTERM");
    await env?.teardown();
    removeLinuxUsers([username]);
  });
  const client = () => apiClient(env.server.baseUrl, env.seed.adminKey, accountId);

  test("a job crontab refuses (a command too long for cron's line) answers 422 at command, in the panel's words", async () => {
    const refused = await client().post("/api/client/cron-jobs", { schedule: "@daily", command: `echo ${"x".repeat(990)}` });
    assert.equal(refused.status, 422, JSON.stringify(refused.body).slice(0, 300));
    assert.ok(refused.body.errors.command, JSON.stringify(refused.body));
    assert.doesNotMatch(JSON.stringify(refused.body), /too long|crontab file|can't install|"-":/);
    assert.match(env.server.output(), /command too long/, "the log has crontab's words");
    assert.deepEqual((await client().get("/api/client/cron-jobs")).body, [], "nothing was kept");
  });

  test("a command with a backslash before a %, a double backslash and bare %s runs whole, as written (real cron)", async () => {
    const out = path.join(home, "public_html", "cron-out.txt");
    // printf's own format holds % and \n; the arguments end in \ before a %, and in \\.
    const command = `printf '%s|' 'a\\%' 'b\\\\' 'c%d' '100%' > public_html/cron-out.txt`;
    const created = await client().post("/api/client/cron-jobs", { schedule: "* * * * *", command });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    for (let waited = 0; waited < 75_000 && !fs.existsSync(out); waited += 500) await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(fs.existsSync(out), `cron ran the job (logs/cron.log: ${fs.readFileSync(path.join(home, "logs", "cron.log"), "utf8")})`);
    assert.equal(fs.readFileSync(out, "utf8"), "a\\%|b\\\\|c%d|100%|");
  });
});
