import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createTestDatabase, type TestDatabase, testBackends } from "../support/database";
import { call } from "../support/http";
import { startServer, type TestServer } from "../support/server";

// Start-up as an admin sees it: configuration checked first, migrations applied, a set-up link.

/** `npm start` (scripts/start.mjs) with `env` over this process's environment: its end. */
const npmStart = (env: Record<string, string>) => spawnSync(process.execPath, ["scripts/start.mjs"], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 60_000 });

test("a bad configuration value stops the start with a message naming the variable", () => {
  for (const [name, value] of [
    ["PORT", "eighty"],
    ["TRUSTED_PROXIES", "10.0.0.0/99"],
    ["DATABASE_URL", "mysql://nope"],
    ["METRICS_INTERVAL_S", "-5"],
    ["PUBLIC_URL", "not a url"],
  ]) {
    const result = npmStart({ [name]: value });
    assert.notEqual(result.status, 0, name);
    assert.match(result.stderr, new RegExp(`Invalid configuration:[\\s\\S]*${name}`), name);
  }
});

test("a bad line in the configuration file stops the start with the file's name and the line", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-start-envfile-"));
  try {
    const file = path.join(root, "panel.env");
    fs.writeFileSync(file, "PORT=3000\nDATA_DIR /srv/panel\n", { mode: 0o600 });
    const result = npmStart({ PANEL_ENV_FILE: file });
    assert.notEqual(result.status, 0);
    assert.match(result.stderr, new RegExp(`Invalid configuration file ${file}, line 2: expected NAME=value`));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

for (const backend of testBackends()) {
  describe(`a fresh install (${backend})`, () => {
    let database: TestDatabase;
    let server: TestServer;
    before(async () => {
      database = await createTestDatabase(backend);
      server = await startServer(database.env);
    });
    after(async () => {
      await server?.stop();
      await database?.drop();
    });

    test("prints a one-time set-up link for the first admin", () => {
      assert.match(server.output(), /No admin exists yet[\s\S]*\/setup\?token=[0-9A-Za-z]{32}/);
    });

    test("serves the API with the schema migrated", async () => {
      const response = await call(server.baseUrl, "GET", "/api/client/account", {
        headers: { "x-api-key": "hcp_x", "x-api-secret": "y" },
      });
      assert.equal(response.status, 401);
    });
  });
}
