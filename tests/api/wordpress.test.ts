import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { addPhpVersion } from "@/lib/php/service";
import { createPlan } from "@/lib/plans/service";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedActor } from "../support/seed";
import { makeChrootableRoot, makeKeyPair, type SshServer, sftpRun, startSshServer } from "../support/ssh-server";
import { waitFor } from "../support/wait";
import { removeLinuxUsers, startWebServers, systemUsersHostingEnv, type WebServers } from "../support/web-servers";

// The yardstick, as a customer who knows only the API meets it: an account, a MariaDB database
// and user made over the API, WordPress (Debian's `wordpress` package, copied as any customer's
// files would be) put in place by SFTP, installed over HTTP through this file's own nginx and
// PHP-FPM — then permalinks, the REST API, a 20 MB upload through WordPress's own uploader, a PHP
// setting raised over the API, a cron job, private logs, suspension without a single 500, and a
// terminate that leaves nothing for the next account of that name. Plus an application on the
// proxy profile.

const root = makeChrootableRoot("wordpress"); // homes that sshd chroots into
const clientDir = fs.mkdtempSync(path.join(root, "client-"));
const createdUsers: string[] = [];
let servers: WebServers;
let sshd: SshServer;
let panelEnv: Record<string, string>;
let cron: ReturnType<typeof spawn> | null = null;

/** WordPress as a customer downloads it: Debian's copy with its links resolved, and a wp-config.php of their own. */
const wordpress = path.join(clientDir, "wordpress");

before(async () => {
  servers = await startWebServers(root);
  sshd = await startSshServer(root);
  panelEnv = { ...systemUsersHostingEnv(servers, root), ...sshd.env, MYSQL_PROVISION_URL: "mysql://root@127.0.0.1:3306" };
  execFileSync("cp", ["-rL", "/usr/share/wordpress", wordpress]);
  fs.rmSync(path.join(wordpress, "wp-config.php"));
  // cron runs the accounts' crontabs; started here when the machine runs none (it reads only crontabs).
  if (spawnSync("pgrep", ["-x", "cron"]).status !== 0) cron = spawn("/usr/sbin/cron", ["-f"], { stdio: "ignore" });
});

after(async () => {
  cron?.kill("SIGTERM");
  await sshd?.stop();
  await servers?.stop();
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

interface Page {
  status: number;
  text: string;
  headers: http.IncomingHttpHeaders;
}

/** A request to the test nginx as a browser for `host` makes it (fetch cannot set Host). */
function request(host: string, urlPath: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {}): Promise<Page> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port: servers.httpPort, path: urlPath, method: options.method ?? "GET", headers: { host, ...options.headers } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk) => chunks.push(chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), headers: response.headers }));
        // A response cut off (the connection closed before its end) fails the request, never hangs it.
        response.on("error", reject);
        response.on("close", () => response.complete || reject(new Error(`the response to ${urlPath} was cut off`)));
      },
    );
    req.on("error", reject);
    req.setTimeout(60_000, () => req.destroy(new Error(`no answer to ${urlPath} within 60 s`)));
    req.end(options.body);
  });
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

const seed = async (db: Database) => ({
  adminKey: await makeKey(db, { scope: "admin" }),
  php82: await addPhpVersion(db, { version: "8.2" }, seedActor),
  plan: await createPlan(db, { name: "wordpress", max_php_memory_mb: 1024 }, seedActor),
});

for (const backend of machineBackends("pglite")) {
  describe(`WordPress from zero through the API (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const username = `wp${randomBytes(3).toString("hex")}`;
    const domain = `${username}.example`;
    const home = path.join(root, "home", username);
    let accountId: number;
    let cookies = "";
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const client = () => apiClient(env.server.baseUrl, env.seed.adminKey, accountId);
    const site = (urlPath: string, options: Parameters<typeof request>[2] = {}) =>
      request(domain, urlPath, { ...options, headers: { cookie: cookies, ...options.headers } });

    before(async () => {
      createdUsers.push(username);
      env = await createEnvironment(backend, seed, panelEnv);
    });
    after(async () => {
      await env?.teardown();
    });

    test("account, database, user and privileges over the API; a cron job; WordPress uploaded by SFTP", async () => {
      const created = await admin().post("/api/admin/accounts", { username, domain, plan: "wordpress" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      accountId = created.body.id;
      const database = await client().post("/api/client/databases", { database_name: "wp" });
      assert.equal(database.status, 201, JSON.stringify(database.body));
      const user = await client().post("/api/client/database-users", { username: "wp", password: "wp-database-secret" });
      assert.equal(user.status, 201, JSON.stringify(user.body));
      const granted = await client().post(`/api/client/database-users/${user.body.id}/assign-database`, {
        database_id: database.body.id,
        privileges: ["ALL PRIVILEGES"],
      });
      assert.equal(granted.status, 200, JSON.stringify(granted.body));

      // cron runs it at the next minute; the last test looks at what it left.
      const job = await client().post("/api/client/cron-jobs", { schedule: "* * * * *", command: "id -un > public_html/cron-ran.txt; echo 100% done" });
      assert.equal(job.status, 201, JSON.stringify(job.body));

      const sample = fs.readFileSync(path.join(wordpress, "wp-config-sample.php"), "utf8");
      fs.writeFileSync(
        path.join(wordpress, "wp-config.php"),
        sample
          .replace("database_name_here", database.body.database_name)
          .replace("username_here", user.body.username)
          .replace("password_here", "wp-database-secret")
          .replace("'localhost'", "'127.0.0.1'")
          // The theme Debian packages (wordpress-theme-twentytwentyone); WordPress's own default is not there.
          .replace("/* Add any custom values between this line and the \"stop editing\" line. */", "define( 'WP_DEFAULT_THEME', 'twentytwentyone' );"),
      );
      fs.writeFileSync(path.join(wordpress, "limits.php"), "<?php echo ini_get('memory_limit'), ' ', ini_get('upload_max_filesize');");
      const key = makeKeyPair(clientDir, `wp-${backend}`);
      assert.equal((await client().post("/api/client/ssh-keys", { name: "laptop", public_key: key.publicLine })).status, 201);
      // As a customer's SFTP client does it: the directory's contents into public_html.
      const upload = sftpRun(sshd.port, username, { privateKey: key.privateKey }, [`lcd ${wordpress}`, "cd public_html", "put -r ."]);
      assert.equal(upload.status, 0, upload.output.slice(-2000));
      assert.ok(fs.existsSync(path.join(home, "public_html", "wp-admin", "install.php")));
      const owner = fs.statSync(path.join(home, "public_html", "wp-login.php")).uid;
      assert.equal(owner, Number(execFileSync("id", ["-u", username], { encoding: "utf8" })), "the customer's own files, no chown by root");
    });

    test("PHP on in one request; wp-admin/install.php installs WordPress over HTTP", async () => {
      const domains = (await client().get("/api/client/domains")).body as { id: number; site_profile: string }[];
      assert.equal(domains[0].site_profile, "php");
      const configured = await client().post("/api/client/account/configure-php", { domain_id: domains[0].id, php_version_id: env.seed.php82.id });
      assert.equal(configured.status, 200, JSON.stringify(configured.body));
      // Live when answered: the very next request runs PHP.
      const installer = await site("/wp-admin/install.php");
      assert.equal(installer.status, 200, installer.text.slice(0, 500));
      const installed = await site("/wp-admin/install.php?step=2", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: form({
          weblog_title: "A customer's blog",
          user_name: "admin",
          admin_password: "correct horse battery staple",
          admin_password2: "correct horse battery staple",
          pw_weak: "1",
          admin_email: "admin@example.com",
          blog_public: "0",
          language: "",
        }),
      });
      assert.equal(installed.status, 200, installed.text.slice(0, 1000));
      assert.match(installed.text, /Success!/);
    });

    test("pretty permalinks: /hello-world/ and the REST API /wp-json/wp/v2/posts answer 200 through the front controller", async () => {
      // The customer picks "Post name" in Settings → Permalinks; WordPress stores this.
      const database = `${username}_wp`;
      execFileSync("mariadb", ["-h", "127.0.0.1", "-u", "root", database, "-e", "UPDATE wp_options SET option_value='/%postname%/' WHERE option_name='permalink_structure'; DELETE FROM wp_options WHERE option_name='rewrite_rules';"]);
      const post = await site("/hello-world/");
      assert.equal(post.status, 200, post.text.slice(0, 500));
      assert.match(post.text, /Hello world!/);
      const api = await site("/wp-json/wp/v2/posts");
      assert.equal(api.status, 200, api.text.slice(0, 500));
      const posts = JSON.parse(api.text) as { slug: string }[];
      assert.deepEqual(posts.map((p) => p.slug), ["hello-world"]);
      assert.equal((await site("/no-such-page/")).status, 404, "WordPress's own 404");
    });

    test("a 20 MB upload through WordPress's uploader (async-upload.php) with the login cookie → 200", async () => {
      const login = await site("/wp-login.php", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: "wordpress_test_cookie=WP%20Cookie%20check" },
        body: form({ log: "admin", pwd: "correct horse battery staple", "wp-submit": "Log In", testcookie: "1", redirect_to: "/wp-admin/" }),
      });
      assert.equal(login.status, 302, login.text.slice(0, 500));
      cookies = (login.headers["set-cookie"] ?? []).map((cookie) => cookie.split(";")[0]).join("; ");
      assert.match(cookies, /wordpress_logged_in_/);
      const media = await site("/wp-admin/media-new.php");
      assert.equal(media.status, 200);
      const nonce = /"_wpnonce":"([0-9a-f]+)"/.exec(media.text)?.[1];
      assert.ok(nonce, "the uploader's nonce");
      const boundary = `----panel${randomBytes(8).toString("hex")}`;
      const file = Buffer.alloc(20 * 1024 * 1024, "All work and no play makes a big text file.\n");
      const part = (name: string, value: string) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
      const body = Buffer.concat([
        Buffer.from(part("name", "big.txt") + part("action", "upload-attachment") + part("_wpnonce", nonce)),
        Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="async-upload"; filename="big.txt"\r\ncontent-type: text/plain\r\n\r\n`),
        file,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ]);
      const uploaded = await site("/wp-admin/async-upload.php", { method: "POST", headers: { "content-type": `multipart/form-data; boundary=${boundary}` }, body });
      assert.equal(uploaded.status, 200, uploaded.text.slice(0, 500));
      assert.equal(JSON.parse(uploaded.text).success, true, uploaded.text.slice(0, 500));
      const stored = execFileSync("find", [path.join(home, "public_html", "wp-content", "uploads"), "-name", "big*.txt", "-size", "+20479k"], { encoding: "utf8" });
      assert.ok(stored.trim(), "the 20 MB file is in wp-content/uploads");
    });

    test("PHP settings over the API show in PHP at once; above the plan's maximum → 422", async () => {
      assert.equal((await site("/limits.php")).text, "256M 64M", "WordPress-sized defaults");
      const raised = await client().put("/api/client/php-settings", { memory_limit_mb: 512 });
      assert.equal(raised.status, 200, JSON.stringify(raised.body));
      assert.equal((await site("/limits.php")).text, "512M 64M");
      const overPlan = await client().put("/api/client/php-settings", { memory_limit_mb: 2048 });
      assert.equal(overPlan.status, 422);
      assert.match(overPlan.body.errors?.memory_limit_mb?.[0] ?? "", /at most 1024 \(the plan's maximum\)/);
      const refused = await client().put("/api/client/php-settings", { upload_max_filesize_mb: 128 });
      assert.equal(refused.status, 422, "post_max_size below the upload size");
      assert.ok(refused.body.errors?.post_max_size_mb);
    });

    test("an application on the proxy profile (a node:http server on a socket in the home's run/) is served through nginx", async () => {
      // The account's application, as it would start itself: listening on run/app.sock, the
      // socket its own and writable by its group (nginx's workers connect through it).
      const socket = path.join(home, "run", "app.sock");
      const app = http.createServer((req, res) => res.end(`node app saw ${req.headers.host} ${req.headers["x-forwarded-proto"]}\n`));
      await new Promise<void>((resolve) => app.listen(socket, resolve));
      const uid = Number(execFileSync("id", ["-u", username], { encoding: "utf8" }));
      fs.chownSync(socket, uid, uid);
      fs.chmodSync(socket, 0o660);
      try {
        const sub = await client().post("/api/client/domains", { domain: "app", domain_type: "subdomain", parent_domain_id: (await client().get("/api/client/domains")).body[0].id, site_profile: "proxy", proxy_socket: "app.sock" });
        assert.equal(sub.status, 201, JSON.stringify(sub.body));
        assert.equal(sub.body.proxy_socket, "app.sock");
        const answer = await request(`app.${domain}`, "/anything");
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.text, `node app saw app.${domain} http\n`);
        const panelPort = await client().put(`/api/client/domains/${sub.body.id}`, { proxy_port: Number(new URL(env.server.baseUrl).port) });
        assert.equal(panelPort.status, 422, "no local port is anybody's any more");
        assert.ok(panelPort.body.errors?.proxy_port, JSON.stringify(panelPort.body));
      } finally {
        app.close();
      }
    });

    test("logs are the account's: its PHP errors land in its logs/, which another account cannot read", async () => {
      const other = `wo${randomBytes(3).toString("hex")}`;
      createdUsers.push(other);
      assert.equal((await admin().post("/api/admin/accounts", { username: other, domain: `${other}.example` })).status, 201);
      fs.writeFileSync(path.join(home, "public_html", "warn.php"), "<?php trigger_error('the customer sees this', E_USER_WARNING); echo 'ok';");
      assert.equal((await site("/warn.php")).text, "ok", "display_errors is off");
      const errorLog = path.join(home, "logs", "php-error.log");
      assert.match(fs.readFileSync(errorLog, "utf8"), /the customer sees this/);
      const asOwner = spawnSync("runuser", ["-u", username, "--", "cat", errorLog], { encoding: "utf8" });
      assert.equal(asOwner.status, 0, asOwner.stderr);
      const asOther = spawnSync("runuser", ["-u", other, "--", "cat", errorLog], { encoding: "utf8" });
      assert.notEqual(asOther.status, 0);
      assert.match(asOther.stderr, /Permission denied/);
    });

    test("the cron job ran as the account's user, its output in logs/cron.log", async () => {
      const ran = path.join(home, "public_html", "cron-ran.txt");
      for (let waited = 0; waited < 75_000 && !fs.existsSync(ran); waited += 500) await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(fs.readFileSync(ran, "utf8"), `${username}\n`);
      assert.equal(fs.statSync(ran).uid, Number(execFileSync("id", ["-u", username], { encoding: "utf8" })));
      for (let waited = 0; waited < 5_000 && !fs.readFileSync(path.join(home, "logs", "cron.log"), "utf8"); waited += 200) await new Promise((resolve) => setTimeout(resolve, 200));
      assert.match(fs.readFileSync(path.join(home, "logs", "cron.log"), "utf8"), /100% done/, "% reaches the command, not cron");
    });

    // nginx reloads by starting new workers before the old ones stop accepting, so for a moment
    // before the suspension answers a visitor may get either (CI run 39 saw 200 200 200 200 503
    // 200); what the panel promises is that from its answer on every request gets the 503
    // (reloadNginx waits until no old worker accepts), and that none ever gets anything else.
    test("suspend while a visitor polls every 50 ms: 200s, then from the suspension's answer on only 503s, never anything else", async () => {
      const seen: { status: number; sentAt: number }[] = [];
      let answeredAt = Infinity;
      // A connection of its own for each request: a kept-alive one that nginx's reload closes as the
      // next request goes out is reset (status 0 here, CI run 22), which a browser retries unseen.
      const poller = (async () => {
        const answeredWith503 = () => seen.some((request) => request.sentAt > answeredAt && request.status === 503);
        while (!answeredWith503() && Date.now() < answeredAt + 10_000) {
          const sentAt = Date.now();
          const { status } = await site("/hello-world/", { headers: { connection: "close" } }).catch(() => ({ status: 0 }) as Page);
          seen.push({ status, sentAt });
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      await waitFor("the visitor's first page", async () => seen.some((request) => request.status === 200), 10_000);
      const suspended = await admin().post(`/api/admin/accounts/${accountId}/suspend`, { reason: "test" });
      assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
      answeredAt = Date.now();
      await poller;
      const statuses = seen.map((request) => `${request.status}${request.sentAt > answeredAt ? "*" : ""}`).join(" ");
      assert.ok(seen.some((request) => request.sentAt > answeredAt), `no request sent after the answer: ${statuses}`);
      assert.equal(seen[0].status, 200, `statuses seen (* sent after the answer): ${statuses}`);
      assert.ok(seen.every((request) => request.status === 200 || request.status === 503), `statuses seen (* sent after the answer): ${statuses}`);
      assert.ok(seen.filter((request) => request.sentAt > answeredAt).every((request) => request.status === 503), `statuses seen (* sent after the answer): ${statuses}`);
      assert.equal((await admin().post(`/api/admin/accounts/${accountId}/unsuspend`)).status, 200);
      assert.equal((await site("/hello-world/")).status, 200, "served again when unsuspend answers");
    });

    test("terminate removes the logs and the visitor statistics: a new account of the same name sees none", async () => {
      const before = await client().get(`/api/client/account/visitor-stats?domain=${domain}`);
      assert.equal(before.status, 200);
      assert.ok(before.body.general.total_requests > 10, "the customer's visits are counted");
      assert.equal((await admin().delete(`/api/admin/accounts/${accountId}`)).status, 200);
      assert.equal(fs.existsSync(home), false);
      assert.equal(fs.existsSync(path.join(panelEnv.ACCESS_LOG_DIR, username)), false, "no access logs left (they were in the home)");
      const again = await admin().post("/api/admin/accounts", { username, domain, plan: "wordpress" });
      assert.equal(again.status, 201, JSON.stringify(again.body));
      accountId = again.body.id;
      // The new account's own (new, empty) log: none of the previous customer's visits.
      for (const query of ["", `?domain=${domain}`]) {
        const stats = await client().get(`/api/client/account/visitor-stats${query}`);
        assert.ok([200, 404].includes(stats.status), JSON.stringify(stats.body));
        assert.equal(stats.status === 200 ? stats.body.general.total_requests : 0, 0, "no visits of the previous customer");
      }
      assert.deepEqual(fs.readdirSync(path.join(home, "public_html")), []);
    });
  });
}
