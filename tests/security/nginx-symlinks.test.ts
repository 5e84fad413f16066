import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey } from "../support/seed";
import { ed25519KeyLine } from "../support/ssh-keys";
import { removeLinuxUsers, startWebServers, systemUsersHostingEnv, visitSite, type WebServers } from "../support/web-servers";

// nginx never crosses accounts (docs/security.md "nginx never crosses accounts"). nginx's workers
// are in every account's group (they enter every home), so a link is all it takes: account B, as
// its own Linux user (as over SFTP or SSH), links files of account A into its public_html — A's
// wp-config.php, A's access log, A's keys file — and asks for them on its own site. Each answer is
// a refusal that carries none of A's content; B's own links, to B's own files, still serve.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-nginx-links-"));
// nginx's workers (www-data) walk from / to each home.
fs.chmodSync(root, 0o755);
const createdUsers: string[] = [];
let servers: WebServers;
let hostingEnv: Record<string, string>;

before(async () => {
  servers = await startWebServers(root);
  const keysDir = path.join(root, "ssh-keys");
  hostingEnv = {
    ...systemUsersHostingEnv(servers, root),
    // The keys files as the panel writes them (root's, group the account's, 0640); no sshd here.
    SSH_SERVER: "openssh",
    SSH_KEYS_DIR: keysDir,
    SSHD_CONFIG_FILE: path.join(root, "sshd-panel.conf"),
    SSHD_TEST_COMMAND: "true",
    SSHD_RELOAD_COMMAND: "true",
  };
});

after(async () => {
  await servers?.stop();
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

/** `script` run by /bin/sh as the account's Linux user, in its home. */
function asCustomer(username: string, home: string, script: string) {
  const result = spawnSync("runuser", ["-u", username, "--", "/bin/sh", "-c", script], { encoding: "utf8", cwd: home });
  assert.equal(result.status, 0, `${script}: ${result.stderr}`);
}

/** The answer once nginx serves `expected` for `urlPath` (a reload may still be under way). */
async function visitUntil(host: string, urlPath: string, expected: (answer: { status: number; text: string }) => boolean) {
  let last = { status: 0, text: "" };
  for (let attempt = 0; attempt < 50; attempt++) {
    last = await visitSite(servers, host, urlPath).catch(() => last);
    if (expected(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return last;
}

async function seed(db: Database) {
  return { adminKey: await makeKey(db, { scope: "admin" }) };
}

for (const backend of machineBackends("pglite")) {
  describe(`nginx follows no link to another account's file (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const suffix = randomBytes(3).toString("hex");
    const a = { username: `la${suffix}`, id: 0 };
    const b = { username: `lb${suffix}`, id: 0 };
    const home = (username: string) => path.join(hostingEnv.HOME_ROOT, username);
    const siteOf = (username: string) => `${username}.example`;
    const A_SECRET = `define('DB_PASSWORD', 'a-${randomBytes(8).toString("hex")}');`;

    before(async () => {
      createdUsers.push(a.username, b.username);
      env = await createEnvironment(backend, seed, hostingEnv);
      const admin = apiClient(env.server.baseUrl, env.seed.adminKey);
      for (const account of [a, b]) {
        const created = await admin.post("/api/admin/accounts", { username: account.username, domain: siteOf(account.username), plan: "default" });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        account.id = created.body.id;
      }
      // A's files, as A's own WordPress and SFTP would leave them.
      asCustomer(a.username, home(a.username), `umask 027 && printf '%s\\n' "${A_SECRET}" > public_html/wp-config.php && echo 'a page of A' > public_html/index.html`);
      const key = await apiClient(env.server.baseUrl, env.seed.adminKey, a.id).post("/api/client/ssh-keys", { name: "laptop", public_key: ed25519KeyLine() });
      assert.equal(key.status, 201, JSON.stringify(key.body));
      // A's access log gets a line: A's site visited.
      assert.equal((await visitUntil(siteOf(a.username), "/", (answer) => answer.status === 200)).text, "a page of A\n");
    });
    after(async () => {
      await env?.teardown();
    });

    test("B's links to A's wp-config.php, A's access log and A's keys file: refused, never the content", async () => {
      const aHome = home(a.username);
      const targets = {
        "config.txt": path.join(aHome, "public_html", "wp-config.php"),
        "log.txt": path.join(aHome, "logs", `${siteOf(a.username)}.log`),
        "keys.txt": path.join(hostingEnv.SSH_KEYS_DIR, a.username),
        // A whole folder of A's, then a file through it.
        peek: path.join(aHome, "public_html"),
      };
      for (const target of Object.values(targets)) assert.ok(fs.existsSync(target), `${target} exists`);
      asCustomer(b.username, home(b.username), Object.entries(targets).map(([name, target]) => `ln -s '${target}' public_html/${name}`).join(" && "));
      asCustomer(b.username, home(b.username), "echo 'a page of B' > public_html/index.html");
      assert.equal((await visitUntil(siteOf(b.username), "/", (answer) => answer.status === 200)).text, "a page of B\n");
      const aKeyLine = fs.readFileSync(targets["keys.txt"], "utf8").trim().split("\n")[0];
      for (const urlPath of ["/config.txt", "/log.txt", "/keys.txt", "/peek/wp-config.php", "/peek/index.html"]) {
        const answer = await visitSite(servers, siteOf(b.username), urlPath);
        assert.ok([403, 404].includes(answer.status), `${urlPath}: ${answer.status} ${answer.text}`);
        for (const secret of [A_SECRET, "a page of A", "GET / HTTP/1.1", aKeyLine]) {
          assert.ok(!answer.text.includes(secret), `${urlPath} served A's content`);
        }
      }
    });

    test("a document root of B's swapped for a link to A's public_html: refused", async () => {
      const client = apiClient(env.server.baseUrl, env.seed.adminKey, b.id);
      const [main] = (await client.get("/api/client/domains")).body;
      const blog = await client.post("/api/client/domains", { domain: "blog", domain_type: "subdomain", parent_domain_id: main.id, site_profile: "static" });
      assert.equal(blog.status, 201, JSON.stringify(blog.body));
      const blogRoot = `public_html/blog.${siteOf(b.username)}`;
      asCustomer(b.username, home(b.username), `echo 'the blog of B' > ${blogRoot}/index.html`);
      const host = `blog.${siteOf(b.username)}`;
      assert.equal((await visitUntil(host, "/", (answer) => answer.status === 200)).text, "the blog of B\n");
      asCustomer(b.username, home(b.username), `rm -r ${blogRoot} && ln -s '${path.join(home(a.username), "public_html")}' ${blogRoot}`);
      for (const urlPath of ["/", "/index.html", "/wp-config.php"]) {
        const answer = await visitSite(servers, host, urlPath);
        assert.ok([403, 404].includes(answer.status), `${urlPath}: ${answer.status} ${answer.text}`);
        assert.ok(!answer.text.includes("a page of A") && !answer.text.includes(A_SECRET), `${urlPath} served A's content`);
      }
    });

    test("B's own links inside B's home still serve: a file and a folder", async () => {
      asCustomer(b.username, home(b.username), "mkdir -p public_html/v2 && echo 'release two' > public_html/v2/notes.html && echo 'the real file' > public_html/real.html && ln -s real.html public_html/alias.html && ln -s v2 public_html/latest");
      assert.equal((await visitUntil(siteOf(b.username), "/alias.html", (answer) => answer.status === 200)).text, "the real file\n");
      assert.equal((await visitSite(servers, siteOf(b.username), "/latest/notes.html")).text, "release two\n");
    });
  });
}
