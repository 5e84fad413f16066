import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { addPhpVersion } from "@/lib/php/service";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedActor } from "../support/seed";
import { removeLinuxUsers, startWebServers, systemUsersHostingEnv, visitSite, type WebServers } from "../support/web-servers";

// Sites served for real: HTTP API → nginx → PHP-FPM as the account's Linux user → access log
// → visitor statistics, with this file's own nginx and php-fpm (tests/support/web-servers.ts).
// The account is created, suspended and terminated through the account lifecycle API.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-web-"));
// nginx's workers (www-data) walk from / to each home.
fs.chmodSync(root, 0o755);
const createdUsers: string[] = [];
let servers: WebServers;
let hostingEnv: Record<string, string>;

before(async () => {
  servers = await startWebServers(root);
  hostingEnv = systemUsersHostingEnv(servers, root);
});

after(async () => {
  await servers?.stop();
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

const visit = (host: string, urlPath = "/") => visitSite(servers, host, urlPath);

/** nginx and php-fpm reload asynchronously: wait until `host` answers as expected. */
async function visitUntil(host: string, expected: (answer: { status: number; text: string }) => boolean, urlPath = "/") {
  let last = { status: 0, text: "" };
  for (let attempt = 0; attempt < 50; attempt++) {
    last = await visit(host, urlPath).catch(() => last);
    if (expected(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return last;
}

const WHOAMI = `<?php echo "php ", PHP_VERSION, " as ", posix_getpwuid(posix_geteuid())["name"], "\\n";`;

async function seedHosting(db: Database) {
  const php82 = await addPhpVersion(db, { version: "8.2" }, seedActor);
  // Known to the panel, missing on the server (no /usr/sbin/php-fpm5.6).
  const php56 = await addPhpVersion(db, { version: "5.6" }, seedActor);
  return { php82, php56, adminKey: await makeKey(db, { scope: "admin" }) };
}

for (const backend of machineBackends("pglite")) {
  describe(`web hosting (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seedHosting>>>;
    const username = `wh${randomBytes(4).toString("hex")}`;
    const domain = `${username}.example`;
    const home = () => path.join(hostingEnv.HOME_ROOT, username);
    let accountId: number;
    before(async () => {
      createdUsers.push(username);
      env = await createEnvironment(backend, seedHosting, hostingEnv);
    });
    after(async () => {
      await env?.teardown();
    });
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const client = () => apiClient(env.server.baseUrl, env.seed.adminKey, accountId);
    const mainDomainId = async () => (await client().get("/api/client/domains")).body.find((d: { domain: string }) => d.domain === domain).id;

    test("POST /api/admin/accounts makes a Linux user without a login shell; its 0750 home is root's, group the account's, with www-data in it", async () => {
      const created = await admin().post("/api/admin/accounts", { username, domain, plan: "default" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      accountId = created.body.id;
      const entry = execFileSync("getent", ["passwd", username], { encoding: "utf8" }).trim().split(":");
      assert.equal(entry[5], home());
      assert.equal(entry[6], "/usr/sbin/nologin");
      const stat = fs.statSync(home());
      assert.equal(stat.mode & 0o777, 0o750);
      assert.equal(stat.uid, 0);
      assert.equal(stat.gid, Number(entry[3]));
      const group = execFileSync("getent", ["group", username], { encoding: "utf8" }).trim().split(":");
      assert.deepEqual(group[3].split(","), ["www-data"]);
      const publicHtml = fs.statSync(path.join(home(), "public_html"));
      assert.ok(publicHtml.isDirectory());
      assert.equal(publicHtml.uid, Number(entry[2]));
    });

    test("the SSH toggle gives and takes the login shell", async () => {
      const shell = () => execFileSync("getent", ["passwd", username], { encoding: "utf8" }).trim().split(":")[6];
      assert.equal((await admin().put(`/api/admin/accounts/${accountId}`, { has_ssh_access: true })).status, 200);
      assert.equal(shell(), "/bin/bash");
      assert.equal((await admin().put(`/api/admin/accounts/${accountId}`, { has_ssh_access: false })).status, 200);
      assert.equal(shell(), "/usr/sbin/nologin");
    });

    test("without PHP: files and directories are served, a missing path is 404, .php sources and dot files are refused (403), /.well-known/ is served", async () => {
      const docroot = path.join(home(), "public_html");
      fs.writeFileSync(path.join(docroot, "page.html"), "a page\n");
      fs.writeFileSync(path.join(docroot, "config.php"), "<?php $password = 'secret';\n");
      fs.mkdirSync(path.join(docroot, ".git"));
      fs.writeFileSync(path.join(docroot, ".git", "config"), "[core]\n");
      fs.writeFileSync(path.join(docroot, ".env"), "SECRET=1\n");
      fs.mkdirSync(path.join(docroot, ".well-known"));
      fs.writeFileSync(path.join(docroot, ".well-known", "security.txt"), "Contact: admin@example.org\n");
      fs.mkdirSync(path.join(docroot, "docs"));
      fs.writeFileSync(path.join(docroot, "docs", "index.html"), "the docs\n");
      assert.equal((await visitUntil(domain, (a) => a.status === 200, "/page.html")).text, "a page\n");
      assert.equal((await visit(domain, "/docs/")).text, "the docs\n");
      assert.equal((await visit(domain, "/missing")).status, 404);
      for (const refused of ["/config.php", "/config.php/more", "/.git/config", "/.env"]) {
        const answer = await visit(domain, refused);
        assert.equal(answer.status, 403, refused);
        assert.doesNotMatch(answer.text, /secret|SECRET|core/, refused);
      }
      assert.equal((await visit(domain, "/.well-known/security.txt")).text, "Contact: admin@example.org\n");
    });

    test("index.php of the main domain runs through nginx on the account's PHP-FPM pool, as the account's user", async () => {
      fs.writeFileSync(path.join(home(), "public_html", "index.php"), WHOAMI);
      const configured = await client().post("/api/client/account/configure-php", {
        domain_id: await mainDomainId(),
        php_version_id: env.seed.php82.id,
        is_php_fpm_enabled: true,
      });
      assert.equal(configured.status, 200, JSON.stringify(configured.body));
      const answer = await visitUntil(domain, (a) => a.status === 200);
      assert.equal(answer.status, 200, answer.text);
      assert.match(answer.text, new RegExp(`^php 8\\.2\\.\\d+ as ${username}$`, "m"));
      assert.equal((await visit(`www.${domain}`)).text, answer.text, "www. serves the same site");
      assert.equal((await visit(domain, "/2026/11/a-permalink/?p=1")).text, answer.text, "what is no file goes to the front controller");
      assert.equal((await visit(domain, "/docs/")).text, "the docs\n", "a directory's index.html is still served");
      assert.equal((await visit(domain, "/missing.php")).status, 404);
      assert.equal((await visit(domain, "/.env")).status, 403, "dot files stay refused");
    });

    test("a subdomain and a parked domain are served", async () => {
      const parent = await mainDomainId();
      const sub = await client().post("/api/client/domains", { domain: "blog", domain_type: "subdomain", parent_domain_id: parent });
      assert.equal(sub.status, 201, JSON.stringify(sub.body));
      const subRoot = path.join(home(), "public_html", `blog.${domain}`);
      assert.ok(fs.statSync(subRoot).isDirectory(), "document root created");
      fs.writeFileSync(path.join(subRoot, "index.html"), "the blog\n");
      assert.equal((await visitUntil(`blog.${domain}`, (a) => a.status === 200)).text, "the blog\n");

      const parkedName = `parked-${username}.example`;
      const parked = await client().post("/api/client/domains", { domain: parkedName, domain_type: "parked", parked_on_domain_id: parent });
      assert.equal(parked.status, 201, JSON.stringify(parked.body));
      const answer = await visitUntil(parkedName, (a) => a.status === 200);
      assert.match(answer.text, new RegExp(`as ${username}$`, "m"), "the site it is parked on");
    });

    test("the site's access and error logs are in the home's logs/ (the account reads them, cannot change them), visitor-stats reports them, logrotate rotates them", async () => {
      const log = path.join(home(), "logs", `${domain}.log`);
      const errorLog = path.join(home(), "logs", "nginx-error.log");
      const marker = `/?visit=${randomBytes(4).toString("hex")}`;
      const logged = (file = log) => fs.existsSync(file) && fs.readFileSync(file, "utf8").includes(`"GET ${marker} HTTP/1.1" 200 `);
      const waitFor = async (done: () => boolean) => {
        // nginx logs a request after answering it.
        for (let attempt = 0; attempt < 40 && !done(); attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
        return done();
      };
      assert.equal(logged(), false);
      assert.equal((await visit(domain, marker)).status, 200);
      assert.ok(await waitFor(() => logged()), "the visit is in the access log, in combined format");
      // A file the web server may not read (the customer's 0600): never served, and nginx says why
      // in the error log. (With disable_symlinks nginx opens each file to look for it, so an
      // unreadable one goes on to try_files' next choice: here PHP's front controller.)
      const asAccount = (...command: string[]) => execFileSync("runuser", ["-u", username, "--", ...command], { encoding: "utf8", stdio: "pipe" });
      const privateFile = `private-${randomBytes(4).toString("hex")}.txt`;
      asAccount("sh", "-c", `umask 077 && echo private-content > ${path.join(home(), "public_html", privateFile)}`);
      const refused = await visit(domain, `/${privateFile}`);
      assert.ok(!refused.text.includes("private-content"), `${refused.status} ${refused.text}`);
      assert.match(refused.text, /^php 8\.2\.\d+ as /, "the front controller answers");
      assert.ok(await waitFor(() => fs.existsSync(errorLog) && fs.readFileSync(errorLog, "utf8").includes(privateFile)), "nginx's error is in the site's error log");
      assert.match(asAccount("cat", log), new RegExp(marker.replace("?", "\\?")), "the account reads its log");
      assert.throws(() => asAccount("sh", "-c", `echo forged >> ${log}`), "but cannot write it");
      assert.throws(() => asAccount("rm", "-f", log), "nor remove it");
      const stats = await client().get(`/api/client/account/visitor-stats?domain=${domain}`);
      assert.equal(stats.status, 200, JSON.stringify(stats.body));
      assert.ok(stats.body.general.total_requests >= 2, `requests: ${stats.body.general.total_requests}`);
      const servingLogs = await client().post("/api/client/domains", { domain: `logs-${username}.example`, domain_type: "domain", domain_path: "logs" });
      assert.equal(servingLogs.status, 422, "logs/ is never a document root");
      assert.ok(servingLogs.body.errors?.domain_path, JSON.stringify(servingLogs.body));

      // Debian's daily logrotate, forced: the rules the panel wrote at start.
      execFileSync("logrotate", ["-f", "-s", path.join(root, "logrotate.state"), hostingEnv.LOGROTATE_CONFIG_FILE]);
      assert.ok(logged(`${log}.1`), "yesterday's visits in <domain>.log.1");
      assert.equal(fs.readFileSync(log, "utf8"), "", "the log starts again");
      const after = `/?after=${randomBytes(4).toString("hex")}`;
      assert.equal((await visit(domain, after)).status, 200);
      assert.ok(await waitFor(() => fs.readFileSync(log, "utf8").startsWith(`127.0.0.1 - - [`) && fs.readFileSync(log, "utf8").includes(after)), "nginx goes on writing into the same file");
    });

    test("configure-php to a version the server lacks → 422 naming it, nothing changed", async () => {
      const id = await mainDomainId();
      const site = path.join(hostingEnv.NGINX_SITES_DIR, `${domain}.conf`);
      const siteBefore = fs.readFileSync(site, "utf8");
      const refused = await client().post("/api/client/account/configure-php", { domain_id: id, php_version_id: env.seed.php56.id, is_php_fpm_enabled: true });
      assert.equal(refused.status, 422);
      assert.match(refused.body.error, /PHP 5\.6, which is not installed/);
      assert.deepEqual((await client().get(`/api/client/domains/${id}`)).body.php_version, { id: env.seed.php82.id, version: "8.2" });
      assert.equal(fs.readFileSync(site, "utf8"), siteBefore);
      assert.equal(fs.existsSync(path.join(hostingEnv.PHP_FPM_POOL_DIR.replace("{version}", "5.6"), `panel-${username}.conf`)), false);
      assert.equal((await visit(domain)).status, 200);
    });

    test("suspended → 503 'suspended' page; unsuspended → served again", async () => {
      assert.equal((await admin().post(`/api/admin/accounts/${accountId}/suspend`, { reason: "unpaid" })).status, 200);
      const suspended = await visitUntil(domain, (a) => a.status === 503);
      assert.equal(suspended.status, 503);
      assert.match(suspended.text, /suspended/);
      assert.equal((await admin().post(`/api/admin/accounts/${accountId}/unsuspend`)).status, 200);
      assert.equal((await visitUntil(domain, (a) => a.status === 200)).status, 200);
    });

    test("a deleted domain is no longer served; its files remain", async () => {
      const sub = (await client().get("/api/client/domains")).body.find((d: { domain_type: string }) => d.domain_type === "subdomain");
      assert.ok(sub, "the subdomain of the earlier test");
      const deleted = await client().delete(`/api/client/domains/${sub.id}`);
      assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
      const answer = await visitUntil(sub.domain, (a) => a.text === "not hosted here\n");
      assert.equal(answer.text, "not hosted here\n");
      assert.ok(fs.existsSync(path.join(home(), "public_html", sub.domain, "index.html")));
      assert.equal(fs.existsSync(path.join(hostingEnv.NGINX_SITES_DIR, `${sub.domain}.conf`)), false);
      assert.equal((await client().delete(`/api/client/domains/${await mainDomainId()}`)).status, 422, "never the main domain");
    });

    test("usage-details: the measured home grows after a 5 MB file; provisioning.web is true", async () => {
      const first = await client().get("/api/client/account/usage-details");
      assert.equal(first.status, 200);
      assert.equal(first.body.provisioning.web, true);
      assert.equal(typeof first.body.disk.used_mb, "number");
      fs.writeFileSync(path.join(home(), "public_html", "big.bin"), randomBytes(5 * 1024 * 1024));
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const second = await client().get("/api/client/account/usage-details");
      assert.ok(second.body.disk.used_mb >= first.body.disk.used_mb + 5, `${first.body.disk.used_mb} → ${second.body.disk.used_mb}`);
      // Each figure says when it was measured: the second one later than the first, and not in the future.
      const [firstAt, secondAt] = [Date.parse(first.body.disk.measured_at), Date.parse(second.body.disk.measured_at)];
      assert.ok(secondAt > firstAt && secondAt <= Date.now(), `${first.body.disk.measured_at} → ${second.body.disk.measured_at}`);
    });

    test("a username that is already a Linux user is refused (422), and nothing is made", async () => {
      const refused = await admin().post("/api/admin/accounts", { username: "nobody", domain: `nobody-${username}.example`, plan: "default" });
      assert.equal(refused.status, 422);
      assert.ok(refused.body.errors.username);
      assert.equal(fs.existsSync(path.join(hostingEnv.HOME_ROOT, "nobody")), false);
    });

    test("terminate removes the sites, pools, Linux user and home", async () => {
      const terminated = await admin().delete(`/api/admin/accounts/${accountId}`);
      assert.equal(terminated.status, 200, JSON.stringify(terminated.body));
      assert.equal((await visitUntil(domain, (a) => a.text === "not hosted here\n")).text, "not hosted here\n");
      assert.deepEqual(fs.readdirSync(hostingEnv.NGINX_SITES_DIR).filter((name) => name.includes(username)), []);
      assert.equal(fs.existsSync(path.join(hostingEnv.PHP_FPM_POOL_DIR.replace("{version}", "8.2"), `panel-${username}.conf`)), false);
      assert.throws(() => execFileSync("getent", ["passwd", username]), "no Linux user");
      assert.equal(fs.existsSync(home()), false, "no home");
    });
  });
}
