import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mailboxPasswordHash } from "@/lib/provisioning/mail-password";
import { DEFAULT_PHP_SETTINGS } from "@/lib/php-settings/schemas";
import { applyForwards, removeForwards } from "@/lib/provisioning/forwards";
import { type AccountState, ensureAccount } from "@/lib/provisioning/reconcile";
import { removeAccountMail } from "@/lib/provisioning/mail";
import { type MailServers, startMailServers } from "../support/mail-servers";
import { type SmtpSink, startSmtpSink } from "../support/smtp-sink";
import { waitFor } from "../support/wait";
import { removeLinuxUsers, startWebServers, type WebServers } from "../support/web-servers";

// A move's source never takes mail into the copy it is about to leave (docs/email.md "Moves"):
// from the hold for the final pass through the switch, every recipient of the account's domains
// gets 450 at RCPT (the sender tries again); once the cleaning took the account's mail off the
// source, the source relays its domains' mail to the target until the forward ends. The
// provisioning functions the move's steps call on the source (ensureAccount with the held state,
// forward.apply, the cleaning's removeAccountMail, forward.remove) against this file's own
// Postfix and nginx; the target is an SMTP sink on 127.0.0.2 at the Postfix's port. Seen to fail
// before moving_domains existed (delivered while held), and before the relay (450 while the
// forward lasted).

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-mail-moving-"));
fs.chmodSync(root, 0o755);
const username = "mvmail";
/** The move's target: every hosting machine's Postfix receives on one port (MAIL_SMTP_PORT). */
const target = "127.0.0.2";
let mail: MailServers;
let web: WebServers;
let targetMail: SmtpSink;

before(async () => {
  [mail, web] = await Promise.all([startMailServers(root), startWebServers(path.join(root, "web"))]);
  targetMail = await startSmtpSink(target, mail.smtpPort);
  Object.assign(process.env, {
    ...mail.env,
    ...web.env,
    SYSTEM_USERS: "1",
    HOME_ROOT: path.join(root, "home"),
    DATA_DIR: path.join(root, "data"),
    PANEL_ENV_FILE: "/dev/null",
  });
});

after(async () => {
  await Promise.all([mail?.stop(), web?.stop(), targetMail?.stop()]);
  removeLinuxUsers([username]);
  fs.rmSync(root, { recursive: true, force: true });
});

/** The account's state as the panel sends it; `moving`: as a move's source holds it for the final pass. */
const state = (moving: boolean): AccountState => ({
  account: {
    username,
    suspended: moving,
    readOnly: moving,
    moving,
    php: DEFAULT_PHP_SETTINGS,
    domains: [{ domain: "moving.example", serverNames: ["moving.example", "www.moving.example"], path: "public_html", profile: "static", phpVersion: null, proxySocket: null }],
  },
  shell: false,
  diskMb: null,
  keys: [],
  cron: [],
  mail: {
    domains: ["moving.example"],
    mailboxes: [{ localPart: "box", domain: "moving.example", passwordHash: mailboxPasswordHash("a long enough password"), quotaMb: 100, enabled: true }],
    aliases: [],
  },
});

/** swaks to box@moving.example on the file's port 25: its whole transcript. */
function sendMail(subject: string): Promise<string> {
  const args = ["--server", `127.0.0.1:${mail.smtpPort}`, "--to", "box@moving.example", "--from", "sender@elsewhere.example", "--header", `Subject: ${subject}`, "--timeout", "15"];
  return new Promise((resolve) => execFile("swaks", args, { timeout: 30_000 }, (_error, stdout, stderr) => resolve(`${stdout}${stderr}`)));
}

/** The server's answer to RCPT TO in a swaks transcript. */
function rcptAnswer(transcript: string): string {
  const lines = transcript.split("\n");
  const answer = lines[lines.findIndex((line) => line.includes("-> RCPT TO:")) + 1] ?? "";
  // swaks marks the server's lines `<-` and its refusals `<**`.
  return /^<(-|\*\*)\s/.test(answer) ? answer.replace(/^<(-|\*\*)\s+/, "") : transcript;
}

const maildirNew = path.join(root, "home", username, "mail", "moving.example", "box", "new");
const delivered = () => (fs.existsSync(maildirNew) ? fs.readdirSync(maildirNew).length : 0);

test("the source defers the account's mail from the hold for the final pass, then relays it to the target until its forward ends", async () => {
  await ensureAccount({ state: state(false), phpVersions: [] });
  assert.match(rcptAnswer(await sendMail("before the move")), /^250 /);
  await waitFor("the message before the move in the maildir", async () => delivered() === 1, 10_000);

  // Held for the final pass: nothing more lands in the home being archived.
  await ensureAccount({ state: state(true), phpVersions: [] });
  assert.match(rcptAnswer(await sendMail("during the final pass")), /^450 4\.3\.2 .*moving to another server/);

  // The switch: the source's sites forward to the target; the account's mail is still here
  // (the cleaning has not taken it yet), so it is still deferred.
  await applyForwards({ target, until: new Date(Date.now() + 600_000).toISOString(), sites: [{ domain: "moving.example", server_names: ["moving.example", "www.moving.example"] }] });
  assert.match(rcptAnswer(await sendMail("in the switch")), /^450 4\.3\.2 /);

  // The cleaning takes the account's mail off the source: from then on it goes to the target.
  await removeAccountMail({ username });
  assert.match(rcptAnswer(await sendMail("while the source forwards")), /^250 /);
  await waitFor("the message relayed to the target", async () => targetMail.messages.length === 1, 15_000).catch((error) => assert.fail(`${error.message}\n${mail.logs()}`));
  assert.deepEqual(targetMail.messages[0].to, ["box@moving.example"]);
  assert.equal(targetMail.messages[0].from, "sender@elsewhere.example");
  assert.match(targetMail.messages[0].data, /^Subject: while the source forwards\r$/m);

  // The forward's end: this machine hosts the domain no more.
  await removeForwards({ domains: ["moving.example"] });
  assert.match(rcptAnswer(await sendMail("after the forward")), /^5\d\d /);
  assert.equal(delivered(), 1, "only the message from before the move is in the source's copy");
  assert.equal(targetMail.messages.length, 1, "only the message sent while the forward lasted went to the target");
});

test("a held account served again (a switch that failed) receives again", async () => {
  await ensureAccount({ state: state(true), phpVersions: [] });
  assert.match(rcptAnswer(await sendMail("held again")), /^450 /);
  await ensureAccount({ state: state(false), phpVersions: [] });
  assert.match(rcptAnswer(await sendMail("served again")), /^250 /);
  await waitFor("the message after the hold in the maildir", async () => delivered() === 2, 10_000);
});
