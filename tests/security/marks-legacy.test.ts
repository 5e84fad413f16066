import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { adoptLegacyUsers, linuxNameOwner } from "@/lib/provisioning/marks";
import { removeLinuxUsers } from "../support/web-servers";

// An installation from before the panel marked its users (docs/security.md "The panel adopts
// nothing it did not make", its installations from before the mark): once per machine, the Linux
// users of the accounts the panel's records name are marked when they are exactly as useradd made
// them for the panel; a service user of an account's name (home elsewhere) is not, and after that
// once nothing is adopted any more. Run with the real useradd and gpasswd on this machine's
// /etc (the users are removed after). On the code before the fix there was no mark at all: every
// user of an account's name was taken as the account's (this file does not load there).

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-marks-legacy-"));
const tag = randomBytes(3).toString("hex");
const [made, service, later] = [`old${tag}`, `svc${tag}`, `new${tag}`];

before(() => {
  fs.chmodSync(root, 0o755);
  Object.assign(process.env, { DATA_DIR: path.join(root, "data"), HOME_ROOT: path.join(root, "home"), SYSTEM_USERS: "1", PANEL_ENV_FILE: "/dev/null" });
  fs.mkdirSync(path.join(root, "data"), { mode: 0o700 });
  // As the panel's useradd made an account's user before it marked them; a service's own user.
  execFileSync("useradd", ["--no-create-home", "--home-dir", path.join(root, "home", made), "--shell", "/usr/sbin/nologin", "--password", "*", "--user-group", made]);
  execFileSync("useradd", ["--system", "--no-create-home", "--home-dir", "/var/lib/service", "--shell", "/bin/sh", "--user-group", service]);
});

after(() => {
  removeLinuxUsers([made, service, later]);
  fs.rmSync(root, { recursive: true, force: true });
});

test("the panel's own users of its records are marked once; a service user of an account's name is not; nothing is adopted after", async () => {
  assert.equal(await linuxNameOwner(made), "foreign", "no mark yet");
  let databasesAdopted = 0;
  await adoptLegacyUsers([made, service], async () => void databasesAdopted++);
  assert.equal(await linuxNameOwner(made), "panel");
  assert.equal(await linuxNameOwner(service), "foreign", "its home is elsewhere: not the panel's");
  assert.equal(execFileSync("getent", ["passwd", service], { encoding: "utf8" }).split(":")[6].trim(), "/bin/sh", "left as it was");
  assert.equal(databasesAdopted, 1);
  assert.ok(fs.existsSync(path.join(root, "data", "marks-adopted")));

  execFileSync("useradd", ["--no-create-home", "--home-dir", path.join(root, "home", later), "--shell", "/usr/sbin/nologin", "--password", "*", "--user-group", later]);
  await adoptLegacyUsers([later], async () => void databasesAdopted++);
  assert.equal(await linuxNameOwner(later), "foreign", "once only: a user made by anyone since is not adopted");
  assert.equal(databasesAdopted, 1);
});
