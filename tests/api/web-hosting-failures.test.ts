import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import type { Connection } from "@/db/client";
import { hostingAccounts } from "@/db/schema";
import { createAccount } from "@/lib/accounts/service";
import { AppError } from "@/lib/errors";
import { applySites, siteHeader } from "@/lib/provisioning/nginx";
import { createTestDatabase, machineBackends, type TestDatabase } from "../support/database";
import { seedActor } from "../support/seed";
import { removeLinuxUsers } from "../support/web-servers";

// When the web server refuses the configuration (NGINX_TEST_COMMAND fails): the previous files
// come back, the request is a 422, and an account being created leaves no Linux user, no home
// and no record. The services run in this process with a test command that always fails.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-web-refused-"));
Object.assign(process.env, {
  WEB_SERVER: "nginx",
  SYSTEM_USERS: "1",
  HOME_ROOT: path.join(root, "home"),
  ACCESS_LOG_DIR: path.join(root, "logs"),
  NGINX_SITES_DIR: path.join(root, "sites"),
  // Commands run without a shell: `false` is the plain way to fail.
  NGINX_TEST_COMMAND: "false",
  NGINX_RELOAD_COMMAND: "true",
  // No nginx runs here: no master whose new workers a reload would wait for.
  NGINX_PID_FILE: "/dev/null",
  PHP_FPM_POOL_DIR: path.join(root, "pools", "{version}"),
  PHP_FPM_SOCKET_DIR: path.join(root, "run"),
});

const username = `wf${randomBytes(4).toString("hex")}`;

after(() => {
  removeLinuxUsers([username]);
  fs.rmSync(root, { recursive: true, force: true });
});

test("a refused configuration puts every previous file back and answers 422", async () => {
  const sites = process.env.NGINX_SITES_DIR!;
  fs.mkdirSync(sites, { recursive: true });
  // The panel's own file from before (its header: a file without it is never overwritten at all).
  const before = `${siteHeader("kept.example")}\n# before\n`;
  fs.writeFileSync(path.join(sites, "kept.example.conf"), before);
  await assert.rejects(
    applySites([
      { domain: "kept.example", contents: `${siteHeader("kept.example")}\n# after\n` },
      { domain: "new.example", contents: `${siteHeader("new.example")}\n# new\n` },
    ]),
    // nginx's words (here: the test command's exit) go to the log, not into the answer.
    (error) => error instanceof AppError && error.code === "VALIDATION" && error.message === "The web server refused the new configuration; nothing was changed",
  );
  assert.equal(fs.readFileSync(path.join(sites, "kept.example.conf"), "utf8"), before);
  assert.equal(fs.existsSync(path.join(sites, "new.example.conf")), false);
});

for (const backend of machineBackends("pglite")) {
  describe(`an account whose site is refused (${backend})`, () => {
    let database: TestDatabase;
    let connection: Connection;
    before(async () => {
      database = await createTestDatabase(backend);
      connection = await database.open();
    });
    after(async () => {
      await connection?.close();
      await database?.drop();
    });

    test("leaves no Linux user, no home and no record", async () => {
      await assert.rejects(createAccount(connection.db, { username, domain: `${username}.example` }, seedActor), /refused the new configuration/);
      assert.throws(() => execFileSync("getent", ["passwd", username]), "no Linux user");
      assert.equal(fs.existsSync(path.join(root, "home", username)), false, "no home");
      assert.equal(fs.existsSync(path.join(root, "sites", `${username}.example.conf`)), false, "no site");
      assert.deepEqual(await connection.db.select().from(hostingAccounts).where(eq(hostingAccounts.username, username)), []);
    });
  });
}
