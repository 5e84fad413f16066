import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { type LimitReached, type MailPolicy, decide, sendingFigures, setSendingAccounts, startMailPolicy } from "@/lib/provisioning/mail-policy";

// The sending limits' policy service (docs/email.md "Sending limits") on a socket of its own, with
// Postfix's protocol spoken by hand: what it answers, what it counts (recipients, in rolling
// windows), and that a request that is not Postfix's ends the connection. Real Postfix asks it in
// tests/api/email-sending-limits.test.ts.

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-policy-"));
process.env.DATA_DIR = dataDir;
const socket = path.join(dataDir, "policy.sock");
const reported: LimitReached[] = [];
let policy: MailPolicy;

before(async () => {
  setSendingAccounts([
    { username: "alice", logins: ["info@alice.example", "alice"], limits: { perHour: 5, perDay: 8 } },
    { username: "bob", logins: ["ceo@bob.example"], limits: { perHour: null, perDay: null } },
  ]);
  policy = await startMailPolicy(socket, async (event) => void reported.push(event));
});

after(async () => {
  await policy?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** One connection: `text` written, everything the service said until it closed or answered `answers` times. */
function speak(text: string, answers = 1): Promise<{ said: string; closed: boolean }> {
  return new Promise((resolve) => {
    const connection = net.connect(socket);
    let said = "";
    connection.setEncoding("utf8");
    connection.on("data", (chunk) => {
      said += chunk;
      if (said.split("\n\n").length - 1 >= answers) {
        connection.destroy();
        resolve({ said, closed: false });
      }
    });
    connection.on("close", () => resolve({ said, closed: true }));
    connection.on("error", () => undefined);
    connection.write(text);
  });
}

const request = (attributes: Record<string, string>) =>
  `${Object.entries({ request: "smtpd_access_policy", protocol_state: "DATA", ...attributes }).map(([name, value]) => `${name}=${value}`).join("\n")}\n\n`;

test("a logged-in message at DATA is counted by its recipients; the PHP login counts for its account", async () => {
  assert.deepEqual(await speak(request({ sasl_username: "info@alice.example", recipient_count: "2" })), { said: "action=DUNNO\n\n", closed: false });
  assert.deepEqual(await speak(request({ sasl_username: "alice", recipient_count: "1" })), { said: "action=DUNNO\n\n", closed: false });
  assert.deepEqual(await sendingFigures({ username: "alice" }), { sent_last_hour: 3, sent_today: 3 });
  // Two requests on one connection, answered in order (Postfix keeps its connection).
  const both = await speak(request({ sasl_username: "INFO@alice.example", recipient_count: "1" }) + request({ sasl_username: "ceo@bob.example", recipient_count: "40" }), 2);
  assert.equal(both.said, "action=DUNNO\n\naction=DUNNO\n\n");
  assert.deepEqual(await sendingFigures({ username: "alice" }), { sent_last_hour: 4, sent_today: 4 });
  assert.deepEqual(await sendingFigures({ username: "bob" }), { sent_last_hour: 40, sent_today: 40 });
});

test("a message that would pass the hourly limit is refused with 450 4.7.1, reported, and not counted", async () => {
  const refused = await speak(request({ sasl_username: "info@alice.example", recipient_count: "2" }));
  assert.match(refused.said, /^action=450 4\.7\.1 The sending limit of 5 messages per hour of this account is reached \(4 sent, 2 more asked\); try again later\n\n$/);
  assert.deepEqual(reported, [{ username: "alice", login: "info@alice.example", period: "hour", limit: 5 }]);
  assert.deepEqual(await sendingFigures({ username: "alice" }), { sent_last_hour: 4, sent_today: 4 });
  assert.equal((await speak(request({ sasl_username: "info@alice.example", recipient_count: "1" }))).said, "action=DUNNO\n\n");
});

test("the daily limit holds over the hours: counts older than an hour still count for the day", async () => {
  // alice has 5 in the last hour; as if it were an hour later, they count for the day only.
  assert.equal(await decide("alice", 3, async () => undefined, Date.now() + 61 * 60_000), "DUNNO");
  const later = await decide("alice", 1, async (event) => void reported.push(event), Date.now() + 62 * 60_000);
  assert.match(later, /^450 4\.7\.1 The sending limit of 8 messages per day/);
});

test("the counts are on disk (DATA_DIR/mail-sending.json, 0600) for the next start", () => {
  const file = path.join(dataDir, "mail-sending.json");
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  const kept = JSON.parse(fs.readFileSync(file, "utf8"));
  assert.equal(kept.accounts.bob.reduce((total: number, [, count]: [number, number]) => total + count, 0), 40);
});

test("not DATA, or no login: DUNNO, nothing counted; an unknown login or a bad count: 451", async () => {
  assert.equal((await speak(request({ protocol_state: "RCPT", sasl_username: "ceo@bob.example", recipient_count: "0" }))).said, "action=DUNNO\n\n");
  assert.equal((await speak(request({ recipient_count: "1" }))).said, "action=DUNNO\n\n");
  assert.deepEqual(await sendingFigures({ username: "bob" }), { sent_last_hour: 40, sent_today: 40 });
  assert.match((await speak(request({ sasl_username: "nobody@elsewhere.example", recipient_count: "1" }))).said, /^action=451 4\.3\.0 /);
  assert.match((await speak(request({ sasl_username: "ceo@bob.example", recipient_count: "-1" }))).said, /^action=451 4\.3\.0 /);
});

test("what is not Postfix's protocol ends the connection unanswered: a long line, a line without =, another request", async () => {
  assert.deepEqual(await speak(`request=smtpd_access_policy\nsasl_username=${"a".repeat(5000)}`), { said: "", closed: true });
  assert.deepEqual(await speak("GET / HTTP/1.1\n\n"), { said: "", closed: true });
  assert.deepEqual(await speak("request=something_else\n\n"), { said: "", closed: true });
  const many = Array.from({ length: 200 }, (_, at) => `x${String.fromCharCode(97 + Math.floor(at / 26))}${String.fromCharCode(97 + (at % 26))}=1`);
  assert.deepEqual(await speak(`request=smtpd_access_policy\n${many.join("\n")}\n\n`), { said: "", closed: true });
});

test("the socket is 0660, group postfix", () => {
  const stat = fs.statSync(socket);
  assert.equal(stat.mode & 0o777, 0o660);
  assert.equal(stat.gid, Number(execFileSync("getent", ["group", "postfix"], { encoding: "utf8" }).split(":")[2]));
});
