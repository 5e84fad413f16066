import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { type MailServers, startMailServers } from "../support/mail-servers";
import { makeKey } from "../support/seed";
import { waitFor } from "../support/wait";
import { removeLinuxUsers } from "../support/web-servers";

// Mail delivered for real (docs/email.md): records made through the HTTP API → the panel's
// Postfix tables and Dovecot passwd-file → this file's own Postfix (SMTP on a free port) → LMTP →
// Dovecot as the account's Linux user → a maildir in the account's home, read back over IMAP and
// POP3 by curl with the mailbox's password. Real clients only: swaks for SMTP, curl for IMAP/POP3.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-mail-"));
// Postfix's and Dovecot's users pass through it to the tables and the LMTP socket.
fs.chmodSync(root, 0o755);
const createdUsers: string[] = [];
let servers: MailServers;

before(async () => {
  servers = await startMailServers(root);
});

after(async () => {
  await servers?.stop();
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

/** swaks's whole conversation (it exits non-zero when the server refuses: the transcript says how). */
function sendMail(to: string, subject: string): Promise<string> {
  const args = ["--server", `127.0.0.1:${servers.smtpPort}`, "--to", to, "--from", "sender@elsewhere.example", "--header", `Subject: ${subject}`, "--body", `the body of ${subject}`, "--timeout", "15"];
  return new Promise((resolve) => execFile("swaks", args, { timeout: 30_000 }, (_error, stdout, stderr) => resolve(`${stdout}${stderr}`)));
}

interface CurlResult {
  code: number;
  stdout: string;
}

function curl(args: string[]): Promise<CurlResult> {
  return new Promise((resolve) =>
    execFile("curl", ["--silent", "--max-time", "10", ...args], { timeout: 20_000 }, (error, stdout) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout: String(stdout) }),
    ),
  );
}

const imapUrl = (suffix = "") => `imap://127.0.0.1:${servers.imapPort}/INBOX${suffix}`;

/** The UIDs of the messages in `address`'s INBOX whose subject holds `token` (a login refused: null). */
async function searchInbox(address: string, password: string, token: string): Promise<number[] | null> {
  const result = await curl(["--user", `${address}:${password}`, imapUrl(), "--request", `UID SEARCH SUBJECT "${token}"`]);
  if (result.code !== 0) return null;
  const line = result.stdout.split("\n").find((text) => text.startsWith("* SEARCH")) ?? "";
  return line.replace("* SEARCH", "").trim().split(/\s+/).filter(Boolean).map(Number);
}

/** The text of the message with `token` in its subject, once it is in `address`'s INBOX. */
async function readDelivered(address: string, password: string, token: string): Promise<string> {
  const uids = await waitFor(`${token} in ${address}'s INBOX\n${servers.logs().slice(-3000)}`, async () => {
    const found = await searchInbox(address, password, token);
    return found && found.length > 0 ? found : null;
  }, 20_000);
  const message = await curl(["--user", `${address}:${password}`, imapUrl(`;UID=${uids[0]}`)]);
  assert.equal(message.code, 0);
  return message.stdout;
}

async function seed(db: Database) {
  return { adminKey: await makeKey(db, { scope: "admin" }) };
}

for (const backend of machineBackends("pglite")) {
  describe(`email delivery (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const username = `em${randomBytes(4).toString("hex")}`;
    const domain = `${username}.example`;
    const home = () => path.join(root, "home", username);
    const password = "a mailbox password";
    let accountId: number;
    let infoId: number;
    before(async () => {
      createdUsers.push(username);
      env = await createEnvironment(backend, seed, { ...servers.env, SYSTEM_USERS: "1", HOME_ROOT: path.join(root, "home") });
    });
    after(async () => {
      await env?.teardown();
    });
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const client = () => apiClient(env.server.baseUrl, env.seed.adminKey, accountId);

    test("a mailbox and an alias made through the API are in the panel's tables, marked, the passwd-file root's and Dovecot's alone", async () => {
      const created = await admin().post("/api/admin/accounts", { username, domain, plan: "default" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      accountId = created.body.id;
      const mailbox = await client().post("/api/client/email/mailboxes", { address: `info@${domain}`, password, quota_mb: 50 });
      assert.equal(mailbox.status, 201, JSON.stringify(mailbox.body));
      infoId = mailbox.body.id;
      const alias = await client().post("/api/client/email/aliases", { address: `hello@${domain}`, targets: [`info@${domain}`] });
      assert.equal(alias.status, 201, JSON.stringify(alias.body));
      const maps = servers.env.MAIL_MAPS_DIR;
      for (const name of ["virtual_domains", "virtual_mailboxes", "virtual_aliases", "passwd"]) {
        assert.match(fs.readFileSync(path.join(maps, name), "utf8"), /^# Written by the hosting panel/, name);
      }
      assert.match(fs.readFileSync(path.join(maps, "virtual_aliases"), "utf8"), new RegExp(`^hello@${domain} info@${domain}$`, "m"));
      const passwd = fs.statSync(path.join(maps, "passwd"));
      assert.equal(passwd.mode & 0o777, 0o640);
      assert.equal(passwd.uid, 0);
      assert.equal(passwd.gid, Number(execFileSync("getent", ["group", "dovecot"], { encoding: "utf8" }).split(":")[2]));
      const line = fs.readFileSync(path.join(maps, "passwd"), "utf8").split("\n").find((text) => text.startsWith(`info@${domain}:`))!;
      const uid = execFileSync("id", ["-u", username], { encoding: "utf8" }).trim();
      assert.match(line, new RegExp(`^info@${domain}:\\{SHA512-CRYPT\\}\\$6\\$[^:]+:${uid}:\\d+::${home()}/mail/${domain}/info::`));
      assert.doesNotMatch(line, new RegExp(password));
    });

    test("a message sent with swaks to the mailbox is read over IMAP with its password; its maildir is in the home, the account's user's", async () => {
      const token = `first-${randomBytes(4).toString("hex")}`;
      const transcript = await sendMail(`info@${domain}`, token);
      assert.match(transcript, /250 2\.0\.0 Ok: queued/, transcript);
      assert.match(await readDelivered(`info@${domain}`, password, token), new RegExp(`the body of ${token}`));
      const maildir = path.join(home(), "mail", domain, "info");
      const uid = Number(execFileSync("id", ["-u", username], { encoding: "utf8" }));
      for (const dir of [path.join(home(), "mail"), maildir, path.join(maildir, "new")]) {
        const stat = fs.lstatSync(dir);
        assert.ok(stat.isDirectory(), dir);
        assert.equal(stat.uid, uid, `${dir} is the account's user's`);
      }
      const files = [...fs.readdirSync(path.join(maildir, "new")), ...fs.readdirSync(path.join(maildir, "cur"))];
      assert.ok(files.length >= 1);
      const used = await client().get(`/api/client/email/mailboxes/${infoId}`);
      assert.ok(used.body.used_mb > 0, `used_mb measured: ${JSON.stringify(used.body)}`);
    });

    test("POP3 reads it too", async () => {
      const list = await curl(["--user", `info@${domain}:${password}`, `pop3://127.0.0.1:${servers.pop3Port}/`]);
      assert.equal(list.code, 0);
      assert.match(list.stdout, /^1 \d+/m);
    });

    test("a wrong password is refused over IMAP and POP3", async () => {
      assert.equal(await searchInbox(`info@${domain}`, "not the password", "x"), null);
      const pop = await curl(["--user", `info@${domain}:not the password`, `pop3://127.0.0.1:${servers.pop3Port}/`]);
      assert.notEqual(pop.code, 0);
    });

    test("an unknown recipient is refused with 550 at RCPT; another server's domain is not relayed", async () => {
      const unknown = await sendMail(`nobody@${domain}`, "never");
      assert.match(unknown, /<\*\* 550 5\.1\.1 <nobody@/, unknown);
      const relay = await sendMail("someone@elsewhere.example", "never");
      assert.match(relay, /<\*\* 554 5\.7\.1 .*Relay access denied/, relay);
    });

    test("the alias delivers to its target", async () => {
      const token = `alias-${randomBytes(4).toString("hex")}`;
      assert.match(await sendMail(`hello@${domain}`, token), /250 2\.0\.0 Ok: queued/);
      await readDelivered(`info@${domain}`, password, token);
    });

    test("a catch-all delivers what no mailbox or alias takes, and never a mailbox's own mail", async () => {
      const sales = await client().post("/api/client/email/mailboxes", { address: `sales@${domain}`, password, quota_mb: 20 });
      assert.equal(sales.status, 201, JSON.stringify(sales.body));
      const catchAll = await client().post("/api/client/email/aliases", { address: `@${domain}`, targets: [`info@${domain}`] });
      assert.equal(catchAll.status, 201, JSON.stringify(catchAll.body));
      const caught = `caught-${randomBytes(4).toString("hex")}`;
      assert.match(await sendMail(`anything-else@${domain}`, caught), /250 2\.0\.0 Ok: queued/);
      await readDelivered(`info@${domain}`, password, caught);
      const own = `own-${randomBytes(4).toString("hex")}`;
      assert.match(await sendMail(`sales@${domain}`, own), /250 2\.0\.0 Ok: queued/);
      await readDelivered(`sales@${domain}`, password, own);
      assert.deepEqual(await searchInbox(`info@${domain}`, password, own), [], "the catch-all took none of sales@'s mail");
    });

    test("a disabled mailbox refuses logins and keeps receiving; enabled again, its mail is there", async () => {
      assert.equal((await client().put(`/api/client/email/mailboxes/${infoId}`, { enabled: false })).status, 200);
      await waitFor("IMAP login refused", async () => (await searchInbox(`info@${domain}`, password, "x")) === null, 10_000);
      const token = `while-disabled-${randomBytes(4).toString("hex")}`;
      assert.match(await sendMail(`info@${domain}`, token), /250 2\.0\.0 Ok: queued/);
      assert.equal((await client().put(`/api/client/email/mailboxes/${infoId}`, { enabled: true })).status, 200);
      await readDelivered(`info@${domain}`, password, token);
    });

    test("a new password works at once, the old one no more", async () => {
      const renewed = "the renewed password";
      assert.equal((await client().put(`/api/client/email/mailboxes/${infoId}`, { password: renewed })).status, 200);
      await waitFor("the new password accepted", async () => (await searchInbox(`info@${domain}`, renewed, "x")) !== null, 10_000);
      assert.equal(await searchInbox(`info@${domain}`, password, "x"), null);
    });

    test("terminating the account takes its mail off the tables: its domain is no longer received", async () => {
      assert.equal((await admin().delete(`/api/admin/accounts/${accountId}`)).status, 200);
      for (const name of ["virtual_domains", "virtual_mailboxes", "virtual_aliases", "passwd"]) {
        assert.doesNotMatch(fs.readFileSync(path.join(servers.env.MAIL_MAPS_DIR, name), "utf8"), new RegExp(domain), name);
      }
      const after = await sendMail(`info@${domain}`, "after termination");
      assert.match(after, /<\*\* 554 5\.7\.1 .*Relay access denied/, after);
      assert.equal(fs.existsSync(home()), false);
    });
  });
}
