import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey } from "../support/seed";
import { removeLinuxUsers, startWebServers, systemUsersHostingEnv, type WebServers } from "../support/web-servers";

// No root operation in a home follows a link the customer controls (docs/security.md
// "No root operation in a home follows a link the customer controls"). Each
// trap is planted by the account's own Linux user (runuser), pointing at decoys outside the home
// that only root may change, then the panel is driven through its HTTP API; every test proves
// the decoys are exactly as they were (entries, owners, modes, contents).

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-traps-"));
// nginx's workers (www-data) walk from / to each home; the account's user walks to the decoys.
fs.chmodSync(root, 0o755);
const bigDecoy = path.join(root, "big-decoy");
const BIG_MB = 20;
const createdUsers: string[] = [];
let servers: WebServers;
let hostingEnv: Record<string, string>;

before(async () => {
  fs.mkdirSync(bigDecoy, { mode: 0o755 });
  fs.writeFileSync(path.join(bigDecoy, "blob"), randomBytes(BIG_MB * 1024 * 1024));
  servers = await startWebServers(root);
  hostingEnv = systemUsersHostingEnv(servers, root);
});

after(async () => {
  await servers?.stop();
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

/** Everything about a tree that root could change by following a link: entries, owners, modes, contents. */
function snapshot(dir: string): Record<string, string> {
  const result: Record<string, string> = {};
  const walk = (file: string) => {
    const stat = fs.lstatSync(file);
    const relative = path.relative(dir, file) || ".";
    const content = stat.isFile() ? createHash("sha256").update(fs.readFileSync(file)).digest("hex") : stat.isDirectory() ? "dir" : "other";
    result[relative] = `${stat.uid}:${stat.gid} ${(stat.mode & 0o7777).toString(8)} ${content}`;
    if (stat.isDirectory()) for (const name of fs.readdirSync(file).sort()) walk(path.join(file, name));
  };
  walk(dir);
  return result;
}

/**
 * A fresh decoy outside every home, root's: a directory (0755) with a subdirectory, a file
 * (0644) and a log only root may read (0600, combined format: a report over it would show its
 * "/secret" line). One per test, so each test's verdict is its own.
 */
function makeDecoy() {
  const dir = fs.mkdtempSync(path.join(root, "decoy-"));
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, "sub"), { mode: 0o755 });
  const file = path.join(dir, "passwd");
  fs.writeFileSync(file, "root:x:0:0:root:/root:/bin/bash\n", { mode: 0o644 });
  const log = path.join(dir, "secret.log");
  fs.writeFileSync(log, `192.0.2.7 - - [10/Oct/2026:13:55:36 +0000] "GET /secret HTTP/1.1" 200 42 "-" "curl/8.0"\n`, { mode: 0o600 });
  const before = { decoy: snapshot(dir), big: snapshot(bigDecoy) };
  return {
    dir,
    file,
    log,
    assertUntouched() {
      assert.deepEqual(snapshot(dir), before.decoy, "the decoy outside the home is unchanged");
      assert.deepEqual(snapshot(bigDecoy), before.big, "the big decoy outside the home is unchanged");
    },
  };
}

/** A command run as the account's Linux user, as the customer would over SSH or from PHP. */
function asUser(username: string, ...command: string[]) {
  execFileSync("runuser", ["-u", username, "--", ...command], { stdio: "pipe" });
}

const seedAdmin = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });

for (const backend of machineBackends("pglite")) {
  describe(`symbolic-link traps in a home (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seedAdmin>>>;
    const username = `tr${randomBytes(4).toString("hex")}`;
    const domain = `${username}.example`;
    const home = path.join(root, "home", username);
    let accountId: number;
    before(async () => {
      createdUsers.push(username);
      env = await createEnvironment(backend, seedAdmin, hostingEnv);
      const created = await admin().post("/api/admin/accounts", { username, domain, plan: "default" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      accountId = created.body.id;
    });
    after(async () => {
      await env?.teardown();
    });
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const client = () => apiClient(env.server.baseUrl, env.seed.adminKey, accountId);
    const mainDomainId = async () => (await client().get("/api/client/domains")).body.find((d: { domain: string }) => d.domain === domain).id;
    const domainNames = async () => (await client().get("/api/client/domains")).body.map((d: { domain: string }) => d.domain);

    test("a domain whose domain_path passes through a link → 422 naming domain_path; nothing made at the link's target", async () => {
      const decoy = makeDecoy();
      asUser(username, "ln", "-s", decoy.dir, path.join(home, "public_html", "x"));
      const refused = await client().post("/api/client/domains", {
        domain: "trap",
        domain_type: "subdomain",
        parent_domain_id: await mainDomainId(),
        domain_path: "public_html/x/y",
      });
      decoy.assertUntouched();
      assert.equal(refused.status, 422, JSON.stringify(refused.body));
      assert.ok(refused.body.errors?.domain_path, JSON.stringify(refused.body));
      assert.ok(!(await domainNames()).includes(`trap.${domain}`), "no domain recorded");
      asUser(username, "rm", path.join(home, "public_html", "x"));
    });

    test("the home itself is root's: the customer cannot rename or replace what is in it", () => {
      assert.throws(() => asUser(username, "mv", path.join(home, "tmp"), path.join(home, "tmp.mine")), /Permission denied/);
      assert.throws(() => asUser(username, "ln", "-s", "/etc", path.join(home, "etc")), /Permission denied/);
      const stat = fs.statSync(home);
      assert.equal(stat.uid, 0);
      assert.equal(stat.mode & 0o777, 0o750);
    });

    // The two traps below need a write in the home, which the customer no longer has (test
    // above): they are planted by root, as a home from before that layout could hold them. The
    // repair must still never follow them.
    test("a home whose tmp is a link is not repaired through it: adding a domain → 422, the target keeps owner and mode", async () => {
      const decoy = makeDecoy();
      fs.renameSync(path.join(home, "tmp"), path.join(home, "tmp.mine"));
      fs.symlinkSync(decoy.dir, path.join(home, "tmp"));
      try {
        const refused = await client().post("/api/client/domains", { domain: "tmptrap", domain_type: "subdomain", parent_domain_id: await mainDomainId() });
        decoy.assertUntouched();
        assert.equal(refused.status, 422, JSON.stringify(refused.body));
        assert.match(refused.body.error, /tmp is a symbolic link/);
      } finally {
        fs.rmSync(path.join(home, "tmp"));
        fs.renameSync(path.join(home, "tmp.mine"), path.join(home, "tmp"));
      }
    });

    test("a home whose public_html is a link: adding a domain under it → 422 naming domain_path, the target unchanged", async () => {
      const decoy = makeDecoy();
      fs.renameSync(path.join(home, "public_html"), path.join(home, "public_html.mine"));
      fs.symlinkSync(decoy.dir, path.join(home, "public_html"));
      try {
        const refused = await client().post("/api/client/domains", { domain: "webtrap", domain_type: "subdomain", parent_domain_id: await mainDomainId() });
        decoy.assertUntouched();
        assert.equal(refused.status, 422, JSON.stringify(refused.body));
        assert.ok(refused.body.errors?.domain_path, JSON.stringify(refused.body));
      } finally {
        fs.rmSync(path.join(home, "public_html"));
        fs.renameSync(path.join(home, "public_html.mine"), path.join(home, "public_html"));
      }
      // With the home put right, the same request is accepted.
      const accepted = await client().post("/api/client/domains", { domain: "webtrap", domain_type: "subdomain", parent_domain_id: await mainDomainId() });
      assert.equal(accepted.status, 201, JSON.stringify(accepted.body));
      assert.ok(fs.statSync(path.join(home, "public_html", `webtrap.${domain}`)).isDirectory());
    });

    test(`usage-details does not count a ${BIG_MB} MB decoy behind links in the home`, async () => {
      const decoy = makeDecoy();
      const first = await client().get("/api/client/account/usage-details");
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.equal(typeof first.body.disk.used_mb, "number");
      asUser(username, "ln", "-s", bigDecoy, path.join(home, "public_html", "big"));
      asUser(username, "ln", "-s", path.join(bigDecoy, "blob"), path.join(home, "tmp", "blob"));
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const second = await client().get("/api/client/account/usage-details");
      assert.equal(second.status, 200);
      assert.ok(second.body.disk.used_mb < first.body.disk.used_mb + 1, `${first.body.disk.used_mb} → ${second.body.disk.used_mb} MB`);
      decoy.assertUntouched();
    });

    test("visitor stats over a log replaced by a link → 422 (errors.domain), the decoy neither read nor changed", async () => {
      const decoy = makeDecoy();
      // The customer cannot plant a link among the logs: logs/ is root's, like the home.
      const logDir = path.join(home, "logs");
      const log = path.join(logDir, `${domain}.log`);
      assert.throws(() => asUser(username, "ln", "-sfn", decoy.log, log), "logs/ is not the customer's to change");
      assert.throws(() => asUser(username, "rm", "-f", path.join(logDir, "php-error.log")));
      // A link there anyway (a home from an older version, a hand-made one) is still never followed.
      const saved = `${log}.saved`;
      if (fs.existsSync(log)) fs.renameSync(log, saved);
      fs.symlinkSync(decoy.log, log);
      try {
        const one = await client().get(`/api/client/account/visitor-stats?domain=${domain}`);
        assert.equal(one.status, 422, JSON.stringify(one.body));
        assert.ok(one.body.errors?.domain, JSON.stringify(one.body));
        const combined = await client().get("/api/client/account/visitor-stats");
        assert.equal(combined.status, 422, JSON.stringify(combined.body));
        assert.doesNotMatch(JSON.stringify(combined.body), /secret/);
        decoy.assertUntouched();
      } finally {
        fs.rmSync(log);
        if (fs.existsSync(saved)) fs.renameSync(saved, log);
      }
    });

    test("terminate with links inside the home removes the home and only the home", async () => {
      const decoy = makeDecoy();
      asUser(username, "ln", "-s", decoy.dir, path.join(home, "public_html", "to-decoy"));
      asUser(username, "ln", "-s", decoy.file, path.join(home, "public_html", "passwd"));
      asUser(username, "ln", "-s", "/", path.join(home, "tmp", "root"));
      asUser(username, "mkdir", "-p", path.join(home, "public_html", "deep", "a", "b"));
      asUser(username, "ln", "-s", bigDecoy, path.join(home, "public_html", "deep", "a", "b", "big"));
      const terminated = await admin().delete(`/api/admin/accounts/${accountId}`);
      assert.equal(terminated.status, 200, JSON.stringify(terminated.body));
      assert.equal(fs.existsSync(home), false, "no home");
      decoy.assertUntouched();
    });
  });
}
