import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { startNodeMailPolicy } from "@/lib/agent/main";
import { type LimitReached, setSendingAccounts } from "@/lib/provisioning/mail-policy";

// A node's agent runs the sending limits' policy service when the node has MAIL_SERVER (docs/email.md
// "Sending limits"), and reports each refusal — as the node's `mail-limit` event, which the panel
// turns into the account's flag (tests/api/email-node-limits.test.ts). Without MAIL_SERVER it runs
// none. Postfix's protocol spoken by hand, as in tests/unit/mail-policy.test.ts.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-agent-policy-"));
const resetEnv = () => delete (globalThis as { __panelEnv?: unknown }).__panelEnv;
after(() => fs.rmSync(root, { recursive: true, force: true }));

function ask(socket: string, attributes: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const connection = net.connect(socket);
    let said = "";
    connection.setEncoding("utf8");
    connection.on("data", (chunk) => {
      said += chunk;
      if (said.endsWith("\n\n")) {
        connection.destroy();
        resolve(said);
      }
    });
    connection.on("error", reject);
    const lines = Object.entries({ request: "smtpd_access_policy", protocol_state: "DATA", ...attributes }).map(([name, value]) => `${name}=${value}`);
    connection.write(`${lines.join("\n")}\n\n`);
  });
}

test("without MAIL_SERVER the agent runs no policy service", async () => {
  Object.assign(process.env, { DATA_DIR: path.join(root, "off") });
  delete process.env.MAIL_SERVER;
  resetEnv();
  assert.equal(await startNodeMailPolicy(() => assert.fail("nothing to report")), null);
});

test("with MAIL_SERVER a refusal of the node's policy service is reported with the account, the login and the limit", async () => {
  // In Postfix's private/ on a real node: a folder that is there.
  const socket = path.join(root, "private", "policy.sock");
  fs.mkdirSync(path.dirname(socket));
  Object.assign(process.env, { DATA_DIR: path.join(root, "on"), MAIL_SERVER: "1", SYSTEM_USERS: "1", MAIL_POLICY_SOCKET: socket, MAIL_MAPS_DIR: path.join(root, "maps"), HOME_ROOT: path.join(root, "home") });
  resetEnv();
  const reported: LimitReached[] = [];
  const policy = await startNodeMailPolicy((event) => reported.push(event));
  try {
    assert.ok(policy);
    setSendingAccounts([{ username: "shop", logins: ["info@shop.example"], limits: { perHour: 2, perDay: null } }]);
    assert.equal(await ask(socket, { sasl_username: "info@shop.example", recipient_count: "2" }), "action=DUNNO\n\n");
    assert.match(await ask(socket, { sasl_username: "info@shop.example", recipient_count: "1" }), /^action=450 4\.7\.1 The sending limit of 2 messages per hour/);
    assert.deepEqual(reported, [{ username: "shop", login: "info@shop.example", period: "hour", limit: 2 }]);
  } finally {
    await policy?.close();
    for (const name of ["MAIL_SERVER", "SYSTEM_USERS", "MAIL_POLICY_SOCKET", "MAIL_MAPS_DIR", "HOME_ROOT"]) delete process.env[name];
    resetEnv();
  }
});
