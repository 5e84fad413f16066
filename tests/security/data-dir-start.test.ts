import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createTestDatabase, type TestDatabase, testBackends } from "../support/database";
import { startServer } from "../support/server";

// What the panel refuses to start with (docs/configuration.md "Configuration";
// docs/security.md "The panel's data is the panel's"): a panel.env that
// its group or others may read (it holds the MariaDB admin's password, DATABASE_URL,
// AUTH_SECRET), and homes inside DATA_DIR when the accounts have Linux users (the customers
// would have to pass through the panel's data to reach their homes). Each message names what
// to change.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-start-refused-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** The server's start with `env`: its output when it refused to start; a server that started is stopped and fails the test. */
async function refusedStart(env: Record<string, string>): Promise<string> {
  let server;
  try {
    server = await startServer(env);
  } catch (error) {
    return (error as Error).message;
  }
  await server.stop();
  assert.fail("the server started");
}

const [backend] = testBackends();

describe(`start-up refusals (${backend})`, () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(backend);
  });
  after(async () => {
    await database?.drop();
  });

  const envFile = (mode: number) => {
    const file = path.join(root, `panel-${mode.toString(8)}.env`);
    fs.writeFileSync(file, "METRICS_RETENTION_DAYS=30\n");
    fs.chmodSync(file, mode);
    return file;
  };

  test("a panel.env its group or others can read: the start is refused, naming the file and chmod 600", async () => {
    for (const mode of [0o644, 0o640, 0o604]) {
      const file = envFile(mode);
      const output = await refusedStart({ ...database.env, PANEL_ENV_FILE: file });
      assert.ok(output.includes(file), output);
      assert.match(output, /chmod 600/, output);
    }
  });

  test("a panel.env of 0600 is read", async () => {
    const server = await startServer({ ...database.env, PANEL_ENV_FILE: envFile(0o600) });
    await server.stop();
  });

  test("SYSTEM_USERS=1 with the homes inside DATA_DIR (HOME_ROOT's default, or set there): the start is refused naming HOME_ROOT", async () => {
    for (const homeRoot of [undefined, path.join(database.env.DATA_DIR, "homes")]) {
      const output = await refusedStart({ ...database.env, SYSTEM_USERS: "1", ...(homeRoot ? { HOME_ROOT: homeRoot } : {}) });
      assert.match(output, /HOME_ROOT/, output);
      assert.match(output, /DATA_DIR/, output);
    }
  });
});
