import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { addPhpVersion } from "@/lib/php/service";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedActor } from "../support/seed";
import { ed25519KeyLine, fingerprintOf } from "../support/ssh-keys";
import { type Credentials, makeChrootableRoot, makeKeyPair, sftpRun, type SshServer, sshRun, startSshServer } from "../support/ssh-server";
import { removeLinuxUsers, startWebServers, systemUsersHostingEnv, type WebServers } from "../support/web-servers";

// Customer file access (docs/files-and-ssh.md "Files and SSH"), as a customer meets it: keys and
// passwords set through the API, then the real `ssh` and `sftp` clients against this file's own
// sshd (whose drop-in the panel writes), and the uploaded site served by this file's own nginx and
// PHP-FPM.

const root = makeChrootableRoot("ssh");
const clientDir = fs.mkdtempSync(path.join(root, "client-"));
const createdUsers: string[] = [];
let servers: WebServers;
let sshd: SshServer;
let panelEnv: Record<string, string>;

before(async () => {
  servers = await startWebServers(root);
  sshd = await startSshServer(root);
  panelEnv = { ...systemUsersHostingEnv(servers, root), ...sshd.env };
});

after(async () => {
  // The servers first: a PHP-FPM pool running as a user would keep userdel from removing it.
  await sshd?.stop();
  await servers?.stop();
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

function visit(port: number, host: string, urlPath = "/"): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: "127.0.0.1", port, path: urlPath, headers: { host } }, (response) => {
        let text = "";
        response.on("data", (chunk) => (text += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
      })
      .on("error", reject);
  });
}

/** The page once nginx serves it: a reload in progress may reset a connection or answer the old configuration. */
async function servedPage(host: string): Promise<{ status: number; text: string }> {
  let page = { status: 0, text: "" };
  for (let attempt = 0; attempt < 50 && page.status !== 200; attempt++) {
    page = await visit(servers.httpPort, host).catch((error: Error) => ({ status: 0, text: error.message }));
    if (page.status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return page;
}

const WHOAMI = `<?php echo "served as ", posix_getpwuid(posix_geteuid())["name"], "\\n";`;

const seed = async (db: Database) => ({
  adminKey: await makeKey(db, { scope: "admin" }),
  php82: await addPhpVersion(db, { version: "8.2" }, seedActor),
});

const keysFile = (username: string) => path.join(sshd.keysDir, username);

for (const backend of machineBackends("pglite")) {
  describe(`SFTP and SSH for customers (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const suffix = randomBytes(3).toString("hex");
    const alice = { username: `sa${suffix}`, id: 0 };
    const bob = { username: `sb${suffix}`, id: 0 };
    const aliceKey = () => makeKeyPair(clientDir, `alice-${backend}`);
    let key: { privateKey: string; publicLine: string };
    let keyId: number;

    before(async () => {
      createdUsers.push(alice.username, bob.username);
      env = await createEnvironment(backend, seed, panelEnv);
      for (const account of [alice, bob]) {
        const created = await admin().post("/api/admin/accounts", { username: account.username, domain: `${account.username}.example`, plan: "default" });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        account.id = created.body.id;
      }
      key = aliceKey();
    });
    after(async () => {
      await env?.teardown();
    });
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const as = (account: { id: number }) => apiClient(env.server.baseUrl, env.seed.adminKey, account.id);
    const withKey = (): Credentials => ({ privateKey: key.privateKey });
    const home = (username: string) => path.join(root, "home", username);

    test("the account tells the client how to connect: host, port, username, shell", async () => {
      const account = await as(alice).get("/api/client/account");
      assert.equal(account.status, 200);
      assert.deepEqual(account.body.ssh, { host: "127.0.0.1", port: sshd.port, username: alice.username, shell: false });
    });

    test("before any key or password nobody gets in", () => {
      assert.equal(sshRun(sshd.port, alice.username, withKey(), "true").status, 255);
    });

    test("a key added by the API lets the customer upload index.php by SFTP; nginx serves it, run as the account's user, no root step between", async () => {
      const added = await as(alice).post("/api/client/ssh-keys", { name: "laptop", public_key: `${key.publicLine}\n` });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      keyId = added.body.id;
      const fingerprint = execFileSync("ssh-keygen", ["-l", "-f", `${key.privateKey}.pub`], { encoding: "utf8" }).split(" ")[1];
      assert.deepEqual(Object.keys(added.body).sort(), ["created_at", "fingerprint", "id", "name", "type"]);
      assert.equal(added.body.fingerprint, fingerprint);
      assert.equal(added.body.type, "ssh-ed25519");
      const listed = await as(alice).get("/api/client/ssh-keys");
      assert.deepEqual(listed.body, { ssh_keys: [added.body] });

      const local = path.join(clientDir, "index.php");
      fs.writeFileSync(local, WHOAMI);
      const upload = sftpRun(sshd.port, alice.username, withKey(), [`put ${local} public_html/index.php`, "ls public_html"]);
      assert.equal(upload.status, 0, upload.output);
      const uploaded = fs.statSync(path.join(home(alice.username), "public_html", "index.php"));
      assert.equal(uploaded.uid, Number(execFileSync("id", ["-u", alice.username], { encoding: "utf8" })));

      const domains = (await as(alice).get("/api/client/domains")).body as { id: number }[];
      const configured = await as(alice).post("/api/client/account/configure-php", { domain_id: domains[0].id, php_version_id: env.seed.php82.id, is_php_fpm_enabled: true });
      assert.equal(configured.status, 200, JSON.stringify(configured.body));
      const page = await servedPage(`${alice.username}.example`);
      assert.equal(page.status, 200, page.text);
      assert.equal(page.text, `served as ${alice.username}\n`);
    });

    test("an SFTP-only account cannot run commands, and sees its home only", () => {
      const command = sshRun(sshd.port, alice.username, withKey(), "id");
      assert.notEqual(command.status, 0, command.output);
      assert.doesNotMatch(command.output, /uid=/);
      const listing = sftpRun(sshd.port, alice.username, withKey(), ["ls -1 /", "ls /etc", `ls ${home(bob.username)}`, `ls /../${bob.username}`]);
      assert.match(listing.output, /public_html/);
      assert.match(listing.output, /"\/etc" not found/);
      assert.doesNotMatch(listing.output, /passwd|shadow/);
      assert.match(listing.output, new RegExp(`"${home(bob.username).replace(/\//g, "\\/")}" not found`));
    });

    test("with has_ssh_access the same key gets a real shell as the account's own user, which cannot read another account's files", async () => {
      fs.writeFileSync(path.join(home(bob.username), "public_html", "secret.txt"), "bob's\n");
      fs.chmodSync(path.join(home(bob.username), "public_html", "secret.txt"), 0o644);
      assert.equal((await admin().put(`/api/admin/accounts/${alice.id}`, { has_ssh_access: true })).status, 200);
      assert.equal((await as(alice).get("/api/client/account")).body.ssh.shell, true);
      const id = sshRun(sshd.port, alice.username, withKey(), "id -un; umask");
      assert.equal(id.status, 0, id.output);
      assert.match(id.output, new RegExp(`^${alice.username}\\n`));
      const snoop = sshRun(sshd.port, alice.username, withKey(), `cat ${home(bob.username)}/public_html/secret.txt`);
      assert.notEqual(snoop.status, 0);
      assert.match(snoop.output, /Permission denied/);
      assert.equal((await admin().put(`/api/admin/accounts/${alice.id}`, { has_ssh_access: false })).status, 200);
      assert.notEqual(sshRun(sshd.port, alice.username, withKey(), "id").status, 0);
    });

    test("a password set by the API logs in; a new one replaces it; removing it leaves keys only", async () => {
      const first = "first correct horse battery";
      const second = "second correct horse battery";
      const short = await as(alice).put("/api/client/account/password", { password: "too short" });
      assert.equal(short.status, 422);
      assert.ok(short.body.errors?.password);
      const set = await as(alice).put("/api/client/account/password", { password: first });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      assert.doesNotMatch(JSON.stringify(set.body), /horse/);
      const shadow = fs.readFileSync("/etc/shadow", "utf8");
      assert.doesNotMatch(shadow, /horse/);
      assert.match(shadow, new RegExp(`^${alice.username}:\\$y\\$`, "m"), "a yescrypt hash in /etc/shadow");
      const byPassword = (password: string) => sftpRun(sshd.port, alice.username, { password, askpassDir: clientDir }, ["ls public_html"]);
      assert.equal(byPassword(first).status, 0, byPassword(first).output);
      assert.equal((await as(alice).put("/api/client/account/password", { password: second })).status, 200);
      assert.notEqual(byPassword(first).status, 0, "the old password is refused");
      assert.equal(byPassword(second).status, 0);
      assert.equal((await as(alice).delete("/api/client/account/password")).status, 200);
      assert.notEqual(byPassword(second).status, 0, "no password after DELETE");
      assert.equal(sftpRun(sshd.port, alice.username, withKey(), ["ls"]).status, 0, "the key still works");
    });

    test("suspended: key and password refused; unsuspended: both work again", async () => {
      const password = "suspended horse battery staple";
      assert.equal((await as(alice).put("/api/client/account/password", { password })).status, 200);
      assert.equal((await admin().post(`/api/admin/accounts/${alice.id}/suspend`, { reason: "unpaid" })).status, 200);
      assert.equal(sftpRun(sshd.port, alice.username, withKey(), ["ls"]).status, 255);
      assert.equal(sftpRun(sshd.port, alice.username, { password, askpassDir: clientDir }, ["ls"]).status, 255);
      assert.doesNotMatch(fs.readFileSync(keysFile(alice.username), "utf8"), /ssh-ed25519/, "no key in the file while suspended");
      assert.equal((await admin().post(`/api/admin/accounts/${alice.id}/unsuspend`)).status, 200);
      assert.equal(sftpRun(sshd.port, alice.username, withKey(), ["ls"]).status, 0);
      assert.equal(sftpRun(sshd.port, alice.username, { password, askpassDir: clientDir }, ["ls"]).status, 0);
    });

    test("a home made before SFTP (the customer's own, www-data not in its group) becomes root's at the first key, and its site stays served", async () => {
      const bobHome = home(bob.username);
      execFileSync("gpasswd", ["--delete", "www-data", bob.username], { stdio: "ignore" });
      execFileSync("chown", [`${bob.username}:www-data`, bobHome]);
      fs.writeFileSync(path.join(bobHome, "public_html", "index.html"), "bob's site\n");
      execFileSync("sh", ["-c", servers.env.NGINX_RELOAD_COMMAND]);
      const served = () => servedPage(`${bob.username}.example`);
      assert.equal((await served()).text, "bob's site\n", "the old layout is served");

      const bobKey = makeKeyPair(clientDir, `bob-${backend}`);
      const added = await as(bob).post("/api/client/ssh-keys", { name: "bob", public_key: bobKey.publicLine });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      const stat = fs.statSync(bobHome);
      assert.deepEqual([stat.uid, stat.gid, stat.mode & 0o777], [0, Number(execFileSync("id", ["-g", bob.username], { encoding: "utf8" })), 0o750]);
      assert.match(execFileSync("getent", ["group", bob.username], { encoding: "utf8" }), /:www-data\n$/);
      assert.equal((await served()).text, "bob's site\n", "still served once the home is root's");
      const sftp = sftpRun(sshd.port, bob.username, { privateKey: bobKey.privateKey }, ["ls public_html"]);
      assert.equal(sftp.status, 0, sftp.output);
      assert.match(sftp.output, /index\.html/);
      assert.equal((await as(bob).delete(`/api/client/ssh-keys/${added.body.id}`)).status, 200);
    });

    test("bad keys → 422 naming public_key, and the keys file is unchanged", async () => {
      const before = fs.readFileSync(keysFile(alice.username), "utf8");
      const weak = makeKeyPair(clientDir, `weak-${backend}`, "rsa", 1024).publicLine;
      const other = makeKeyPair(clientDir, `other-${backend}`).publicLine;
      const bad = [
        `command="/bin/sh" ${other}`,
        `no-pty,from="*" ${other}`,
        `${other}\n${weak}`,
        `${other}\ncommand="x" ${key.publicLine}`,
        weak,
        "ssh-ed25519 not-base64!",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==",
        `ssh-rsa ${other.split(" ")[1]}`,
        "ssh-dss AAAAB3NzaC1kc3MAAACBAP",
        "",
        key.publicLine, // already on the account
      ];
      for (const public_key of bad) {
        const refused = await as(alice).post("/api/client/ssh-keys", { name: "bad", public_key });
        assert.equal(refused.status, 422, `${JSON.stringify(public_key)} → ${refused.status} ${JSON.stringify(refused.body)}`);
        assert.ok(refused.body.errors?.public_key, JSON.stringify(refused.body));
      }
      const badName = await as(alice).post("/api/client/ssh-keys", { name: "a\nb", public_key: other });
      assert.equal(badName.status, 422);
      assert.equal(fs.readFileSync(keysFile(alice.username), "utf8"), before);
      assert.equal((await as(alice).get("/api/client/ssh-keys")).body.ssh_keys.length, 1);
    });

    test("another account cannot see or delete the key; deleting it locks the key out", async () => {
      assert.deepEqual((await as(bob).get("/api/client/ssh-keys")).body, { ssh_keys: [] });
      assert.equal((await as(bob).delete(`/api/client/ssh-keys/${keyId}`)).status, 404);
      assert.equal(sftpRun(sshd.port, alice.username, withKey(), ["ls"]).status, 0);
      assert.equal((await as(alice).delete(`/api/client/ssh-keys/${keyId}`)).status, 200);
      assert.equal(sftpRun(sshd.port, alice.username, withKey(), ["ls"]).status, 255);
      assert.doesNotMatch(fs.readFileSync(keysFile(alice.username), "utf8"), /ssh-ed25519/);
    });

    test("400 concurrent key adds on one account: the plan's 100 accepted, the rest 422, and the file holds exactly the accepted keys", async () => {
      const lines = Array.from({ length: 400 }, ed25519KeyLine);
      const answers = await Promise.all(lines.map((public_key, index) => as(bob).post("/api/client/ssh-keys", { name: `k${index}`, public_key })));
      const statuses = answers.map((answer) => answer.status);
      const counted = [...new Set(statuses)].map((status) => `${statuses.filter((other) => other === status).length}× ${status} ${JSON.stringify(answers.find((answer) => answer.status === status)!.body)}`).join("; ");
      assert.equal(statuses.filter((status) => status === 201).length, 100, counted);
      assert.equal(statuses.filter((status) => status === 422).length, 300, counted);
      const listed = (await as(bob).get("/api/client/ssh-keys")).body.ssh_keys as { fingerprint: string }[];
      const inFile = fs
        .readFileSync(keysFile(bob.username), "utf8")
        .split("\n")
        .filter((line) => line.startsWith("ssh-"));
      assert.equal(inFile.length, 100);
      const fingerprints = inFile.map(fingerprintOf);
      assert.deepEqual(fingerprints.sort(), listed.map((k) => k.fingerprint).sort());
      const stat = fs.statSync(keysFile(bob.username));
      assert.equal(stat.uid, 0);
      assert.equal(stat.mode & 0o777, 0o640);
    });

    test("terminate: the keys file, the Linux user and its group are gone", async () => {
      assert.equal((await admin().delete(`/api/admin/accounts/${bob.id}`)).status, 200);
      assert.equal(fs.existsSync(keysFile(bob.username)), false);
      assert.notEqual(spawnSync("getent", ["passwd", bob.username]).status, 0);
      assert.notEqual(spawnSync("getent", ["group", bob.username]).status, 0);
    });
  });
}
