import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { mailboxes, mailDomains } from "@/db/schema";
import type { Database } from "@/db/client";
import { mailboxPasswordHash } from "@/lib/provisioning/mail-password";
import { createEnvironment } from "../tests/support/environment";
import { apiClient } from "../tests/support/http";
import { startMailServers } from "../tests/support/mail-servers";
import { makeKey } from "../tests/support/seed";
import { removeLinuxUsers } from "../tests/support/web-servers";
import { verdict } from "./support";

// `npm run bench -- mail` (docs/performance.md "Mail: `npm run bench -- mail` (m), (n)"), on the
// servers the email tests run (tests/support/mail-servers.ts: Postfix, Dovecot 2.3 and rspamd of
// their own, on free ports) and a panel on PostgreSQL with SYSTEM_USERS, so delivery is as the
// account's Linux user into its home:
// (m) MESSAGES messages of 10 KB to one mailbox, each in an SMTP session of its own as swaks holds
//     one (EHLO, MAIL, RCPT, DATA, QUIT) on Postfix's port 25, SESSIONS at a time: the time until
//     the last was accepted, and until the last was in the maildir (Postfix → LMTP → Dovecot).
// (n) MAILBOXES mailboxes on one account (all but the last inserted straight into the database,
//     with one password hash): the time one more takes through the API, which renders the
//     Postfix maps and Dovecot's passwd-file of them all and applies them before it answers
//     (target ≤ 2 s), then an IMAP LOGIN of that last mailbox, the 10,000th (target ≤ 100 ms).

const MESSAGES = Number(process.env.BENCH_MAIL_MESSAGES ?? 1_000);
/**
 * rspamd modules turned off for the run (`BENCH_MAIL_RSPAMD_OFF=rbl`): where no resolver answers
 * the DNS blocklists (a machine without the internet), each lookup waits out rspamd's 1 s DNS
 * timeout, and the run measures that wait rather than the servers (docs/performance.md).
 */
const RSPAMD_OFF = (process.env.BENCH_MAIL_RSPAMD_OFF ?? "").split(",").filter(Boolean);
const SESSIONS = 4;
const MAILBOXES = Number(process.env.BENCH_MAILBOXES ?? 10_000);
const PASSWORD = "bench mailbox password";

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** A line-based conversation on `socket`: `reply()` waits for the next complete reply ("ddd text", or "tag OK …" for IMAP). */
function conversation(socket: net.Socket, complete: RegExp) {
  let said = "";
  let waiting: (() => void) | null = null;
  socket.setEncoding("utf8");
  socket.on("data", (chunk) => {
    said += chunk;
    waiting?.();
  });
  return {
    async reply(): Promise<string> {
      for (;;) {
        const match = complete.exec(said);
        if (match) {
          said = said.slice(match.index + match[0].length);
          return match[0].trim();
        }
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no reply in 30 s; said: ${said.slice(-300)}`)), 30_000);
          waiting = () => {
            clearTimeout(timer);
            waiting = null;
            resolve();
          };
        });
      }
    },
  };
}

/** One message in an SMTP session of its own; throws unless every step is accepted. */
async function sendOne(port: number, to: string, body: string): Promise<void> {
  const socket = net.connect(port, "127.0.0.1");
  const smtp = conversation(socket, /^\d{3} [^\r\n]*\r\n/m);
  const expect = async (code: string, what: string) => {
    const reply = await smtp.reply();
    if (!reply.startsWith(code)) throw new Error(`${what}: ${reply}`);
  };
  try {
    await expect("220", "greeting");
    socket.write("EHLO bench.client.example\r\n");
    await expect("250", "EHLO");
    socket.write("MAIL FROM:<bench@elsewhere.example>\r\n");
    await expect("250", "MAIL FROM");
    socket.write(`RCPT TO:<${to}>\r\n`);
    await expect("250", "RCPT TO");
    socket.write("DATA\r\n");
    await expect("354", "DATA");
    socket.write(body);
    await expect("250", "the message");
    socket.write("QUIT\r\n");
    await expect("221", "QUIT");
  } finally {
    socket.destroy();
  }
}

/** A 10 KB message: headers, then lines of 76 characters (dot-stuffing needs none: no line starts with "."). */
function tenKilobyteMessage(to: string, n: number): string {
  const line = "x".repeat(76);
  const lines = Array.from({ length: Math.ceil(10_240 / 78) }, () => line);
  return [`From: bench@elsewhere.example`, `To: ${to}`, `Subject: bench ${n}`, "", ...lines, ".", ""].join("\r\n");
}

const countFiles = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).length : 0);

/** The milliseconds of an IMAP LOGIN of `address`, from the command to its tagged OK. */
async function imapLoginMs(port: number, address: string, password: string): Promise<number> {
  const socket = net.connect(port, "127.0.0.1");
  const imap = conversation(socket, /^(\* OK|a[0-9] (OK|NO|BAD))[^\r\n]*\r\n/m);
  try {
    await imap.reply();
    const started = performance.now();
    socket.write(`a1 LOGIN "${address}" "${password}"\r\n`);
    const reply = await imap.reply();
    const ms = performance.now() - started;
    if (!reply.startsWith("a1 OK")) throw new Error(`LOGIN ${address}: ${reply}`);
    socket.write("a2 LOGOUT\r\n");
    return ms;
  } finally {
    socket.destroy();
  }
}

/** Mailboxes m1 … m`count` of the account's mail domain, straight into the database, with one password hash. */
async function seedMailboxes(db: Database, accountId: number, mailDomainId: number, domain: string, count: number): Promise<void> {
  const passwordHash = mailboxPasswordHash(PASSWORD);
  for (let start = 1; start <= count; start += 1_000) {
    const rows = Array.from({ length: Math.min(1_000, count - start + 1) }, (_, i) => ({
      accountId,
      mailDomainId,
      localPart: `m${start + i}`,
      address: `m${start + i}@${domain}`,
      passwordHash,
      quotaMb: 10,
    }));
    await db.insert(mailboxes).values(rows);
  }
}

export async function runMailBench(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-bench-mail-"));
  // Postfix's and Dovecot's users pass through it to the tables and the LMTP socket.
  fs.chmodSync(root, 0o755);
  const username = `mailbench${process.pid % 10_000}`;
  const domain = `${username}.example`;
  const servers = await startMailServers(root, { rspamdModulesOff: RSPAMD_OFF });
  let teardown: (() => Promise<void>) | null = null;
  try {
    const env = await createEnvironment("postgres", async (db) => ({ adminKey: await makeKey(db, { scope: "admin" }) }), {
      ...servers.env,
      SYSTEM_USERS: "1",
      HOME_ROOT: path.join(root, "home"),
      ZONES_DIR: path.join(root, "zones"),
    });
    teardown = env.teardown;
    const admin = apiClient(env.server.baseUrl, env.seed.adminKey);
    const created = await admin.post("/api/admin/accounts", { username, domain });
    if (created.status !== 201) throw new Error(`account: ${JSON.stringify(created.body)}`);
    const client = apiClient(env.server.baseUrl, env.seed.adminKey, created.body.id);
    const sink = await client.post("/api/client/email/mailboxes", { address: `sink@${domain}`, password: PASSWORD, quota_mb: 1_000 });
    if (sink.status !== 201) throw new Error(`mailbox: ${JSON.stringify(sink.body)}`);

    // (m)
    const maildir = path.join(root, "home", username, "mail", domain, "sink");
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: SESSIONS }, async () => {
        while (next < MESSAGES) {
          const n = next++;
          await sendOne(servers.smtpPort, `sink@${domain}`, tenKilobyteMessage(`sink@${domain}`, n));
        }
      }),
    );
    const accepted = performance.now() - started;
    for (;;) {
      const delivered = countFiles(path.join(maildir, "new")) + countFiles(path.join(maildir, "cur"));
      if (delivered >= MESSAGES) break;
      if (performance.now() - started > 600_000) throw new Error(`only ${delivered} of ${MESSAGES} delivered in 10 minutes:\n${servers.logs().slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const inMaildir = performance.now() - started;
    console.log(`\n(m) ${MESSAGES} messages of 10 KB, ${SESSIONS} SMTP sessions at a time (one message each)${RSPAMD_OFF.length ? `, rspamd without ${RSPAMD_OFF.join(", ")}` : ""}:`);
    console.log(`  all accepted in ${seconds(accepted)} (${(MESSAGES / (accepted / 1000)).toFixed(1)} messages/s)`);
    console.log(`  all in the maildir in ${seconds(inMaildir)} (${(MESSAGES / (inMaildir / 1000)).toFixed(1)} messages/s)`);

    // (n)
    const [mailDomain] = await env.db!.select({ id: mailDomains.id }).from(mailDomains);
    await seedMailboxes(env.db!, created.body.id, mailDomain.id, domain, MAILBOXES - 2);
    const changeStarted = performance.now();
    const last = await client.post("/api/client/email/mailboxes", { address: `last@${domain}`, password: PASSWORD, quota_mb: 10 });
    const changeMs = performance.now() - changeStarted;
    if (last.status !== 201) throw new Error(`the ${MAILBOXES}th mailbox: ${JSON.stringify(last.body)}`);
    const logins: number[] = [];
    for (let i = 0; i < 5; i++) logins.push(await imapLoginMs(servers.imapPort, `last@${domain}`, PASSWORD));
    console.log(`\n(n) ${MAILBOXES} mailboxes on one account:`);
    console.log(`  one more through the API (maps and passwd-file rendered and applied): ${seconds(changeMs)}`);
    console.log(`  IMAP LOGIN of the ${MAILBOXES}th: ${logins.map((ms) => `${ms.toFixed(0)} ms`).join(", ")}`);
    verdict(`(n) one change with ${MAILBOXES.toLocaleString("en")} mailboxes, seconds`, changeMs / 1000, 2, "≤");
    verdict(`(n) IMAP LOGIN of the ${MAILBOXES.toLocaleString("en")}th mailbox, median ms`, median(logins), 100, "≤");
  } finally {
    await teardown?.();
    await servers.stop();
    removeLinuxUsers([username]);
    fs.rmSync(root, { recursive: true, force: true });
  }
}
