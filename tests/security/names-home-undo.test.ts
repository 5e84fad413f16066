import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Connection } from "@/db/client";
import { createAccount } from "@/lib/accounts/service";
import { createTestDatabase, machineBackends, type TestDatabase } from "../support/database";
import { seedActor } from "../support/seed";
import { removeLinuxUsers } from "../support/web-servers";

// An account is created under a name whose HOME_ROOT/<name> is already there (files an
// administrator put there to adopt, a folder of something else), and the creation fails late
// (here the web server refuses the site): the undo removes what the creation made — the Linux
// user, the site — and never that folder, which it did not make. In this process, with real
// useradd and a web server test that always fails.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-home-undo-"));
Object.assign(process.env, {
  WEB_SERVER: "nginx",
  SYSTEM_USERS: "1",
  HOME_ROOT: path.join(root, "home"),
  ACCESS_LOG_DIR: path.join(root, "logs"),
  NGINX_SITES_DIR: path.join(root, "sites"),
  NGINX_TEST_COMMAND: "false",
  NGINX_RELOAD_COMMAND: "true",
  NGINX_PID_FILE: "/dev/null",
  PHP_FPM_POOL_DIR: path.join(root, "pools", "{version}"),
  PHP_FPM_SOCKET_DIR: path.join(root, "run"),
});

const username = `hu${randomBytes(4).toString("hex")}`;
const [backend] = machineBackends("pglite");
let database: TestDatabase;
let connection: Connection;

before(async () => {
  database = await createTestDatabase(backend);
  connection = await database.open();
});
after(async () => {
  await connection?.close();
  await database?.drop();
  removeLinuxUsers([username]);
  fs.rmSync(root, { recursive: true, force: true });
});

test(`a HOME_ROOT/<name> that was there before survives a failed create, its files untouched (${backend})`, async () => {
  const home = path.join(root, "home", username);
  fs.mkdirSync(path.join(home, "site"), { recursive: true });
  fs.writeFileSync(path.join(home, "site", "index.html"), "the administrator's copy\n");
  await assert.rejects(createAccount(connection.db, { username, domain: `${username}.example` }, seedActor), /refused the new configuration/);
  assert.equal(fs.readFileSync(path.join(home, "site", "index.html"), "utf8"), "the administrator's copy\n");
  assert.throws(() => execFileSync("getent", ["passwd", username]), "the Linux user it made is gone");
});

test(`a home the failed create made itself is removed (${backend})`, async () => {
  const other = `${username}x`;
  try {
    await assert.rejects(createAccount(connection.db, { username: other, domain: `${other}.example` }, seedActor), /refused the new configuration/);
    assert.equal(fs.existsSync(path.join(root, "home", other)), false);
  } finally {
    removeLinuxUsers([other]);
  }
});
