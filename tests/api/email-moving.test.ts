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
import { waitFor } from "../support/wait";
import { removeLinuxUsers, startWebServers, type WebServers } from "../support/web-servers";

// A move's source never takes mail into the copy it is about to leave (docs/email.md "Moves"):
// from the hold for the final pass, through the switch and while its sites forward to the target,
// every recipient of the account's domains gets 450 at RCPT (the sender tries again, by then at
// the target). The provisioning functions the move's steps call on the source (ensureAccount with
// the held state, forward.apply, the cleaning's removeAccountMail, forward.remove) against this
// file's own Postfix and nginx. Seen to fail before moving_domains existed: delivered while held.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-mail-moving-"));
fs.chmodSync(root, 0o755);
const username = "mvmail";
let mail: MailServers;
let web: WebServers;

before(async () => {
  [mail, web] = await Promise.all([startMailServers(root), startWebServers(path.join(root, "web"))]);
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
  await Promise.all([mail?.stop(), web?.stop()]);
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

test("the source defers the account's mail from the hold for the final pass until its forward ends", async () => {
  await ensureAccount({ state: state(false), phpVersions: [] });
  assert.match(rcptAnswer(await sendMail("before the move")), /^250 /);
  await waitFor("the message before the move in the maildir", async () => delivered() === 1, 10_000);

  // Held for the final pass: nothing more lands in the home being archived.
  await ensureAccount({ state: state(true), phpVersions: [] });
  assert.match(rcptAnswer(await sendMail("during the final pass")), /^450 4\.3\.2 .*moving to another server/);

  // The switch: the source's sites forward to the target; the cleaning takes the account's mail off.
  await applyForwards({ target: "192.0.2.3", until: new Date(Date.now() + 600_000).toISOString(), sites: [{ domain: "moving.example", server_names: ["moving.example", "www.moving.example"] }] });
  await removeAccountMail({ username });
  assert.match(rcptAnswer(await sendMail("while the source forwards")), /^450 4\.3\.2 /);

  // The forward's end: this machine hosts the domain no more.
  await removeForwards({ domains: ["moving.example"] });
  assert.match(rcptAnswer(await sendMail("after the forward")), /^5\d\d /);
  assert.equal(delivered(), 1, "only the message from before the move is in the source's copy");
});

test("a held account served again (a switch that failed) receives again", async () => {
  await ensureAccount({ state: state(true), phpVersions: [] });
  assert.match(rcptAnswer(await sendMail("held again")), /^450 /);
  await ensureAccount({ state: state(false), phpVersions: [] });
  assert.match(rcptAnswer(await sendMail("served again")), /^250 /);
  await waitFor("the message after the hold in the maildir", async () => delivered() === 2, 10_000);
});
