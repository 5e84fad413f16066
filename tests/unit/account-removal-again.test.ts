import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { removeLinuxUsers } from "../support/web-servers";

// Removing an account from a machine runs again and gives the same result: a termination or a
// move's cleaning whose attempt failed after the Linux user went is tried again from its start.
// Seen failing before: the retry stopped at the crontab's removal for good ("cron refused the
// account's jobs": `crontab -u USER -r` answers "user unknown" once the user is gone), and a
// move's cleaning failed 115 times.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-removal-again-"));
const username = `ra${randomBytes(3).toString("hex")}`;

before(() => {
  Object.assign(process.env, { DATA_DIR: path.join(root, "data"), SYSTEM_USERS: "1", HOME_ROOT: path.join(root, "home") });
  fs.mkdirSync(path.join(root, "data"));
  fs.mkdirSync(path.join(root, "home"));
  delete (globalThis as { __panelEnv?: unknown }).__panelEnv;
});

after(() => {
  removeLinuxUsers([username]);
  fs.rmSync(root, { recursive: true, force: true });
});

test("an account's crontab, user and home removed, then removed again: the second run succeeds and changes nothing", async () => {
  const { createAccountUser, installAccountCrontab, removeAccountCrontab, removeAccountHome } = await import("@/lib/provisioning/logins");
  assert.equal(await createAccountUser({ username, shell: false, diskMb: null }), true);
  await installAccountCrontab({ username, jobs: [{ schedule: "*/5 * * * *", command: "true" }], suspended: false });
  assert.match(execFileSync("crontab", ["-u", username, "-l"], { encoding: "utf8" }), /^\*\/5 \* \* \* \* .*'true'/m);

  await removeAccountCrontab({ username });
  await removeAccountHome({ username });
  assert.throws(() => execFileSync("id", ["--", username], { stdio: "pipe" }), "the Linux user is gone");

  await removeAccountCrontab({ username });
  await removeAccountHome({ username });
  assert.equal(fs.existsSync(path.join(root, "home", username)), false);
});
