import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createTestDatabase, type TestDatabase, testBackends } from "../support/database";
import { apiClient, type Credentials } from "../support/http";
import { makeKey } from "../support/seed";
import { startServer, type TestServer } from "../support/server";
import { removeLinuxUsers } from "../support/web-servers";

// The panel's data is the panel's (docs/security.md "The panel's data is the panel's"): an
// account's own Linux user, reading as that user (runuser), gets nothing of DATA_DIR — not PGlite's
// WAL (the generated auth_secret, TOTP secrets, admins' password hashes), not the zone files, the
// visitor statistics, the certificates or the backup password. The install is one an older version
// left open: DATA_DIR made 0755 by the panel (PostgreSQL: the panel makes it at its first start),
// PGlite's files 0666, certificates and the backup password copied in with the usual 0644/0755; the
// start repairs it.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-data-dir-"));
// The accounts' homes and the test's planted files are reached from / by the account's user.
fs.chmodSync(root, 0o755);
const createdUsers: string[] = [];

after(() => {
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

/** `command args…` run as the account's Linux user: how it ended and what it printed. */
function asCustomer(username: string, command: string, ...args: string[]) {
  const result = spawnSync("runuser", ["-u", username, "--", command, ...args], { encoding: "utf8", cwd: "/" });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Every entry below `dir` whose mode lets its group or others in (links, which have no mode of their own, aside). */
function openEntries(dir: string): string[] {
  const open: string[] = [];
  const walk = (file: string) => {
    const stat = fs.lstatSync(file);
    if (stat.isSymbolicLink()) return;
    if ((stat.mode & 0o077) !== 0) open.push(`${path.relative(dir, file) || "."} ${(stat.mode & 0o7777).toString(8)}`);
    if (stat.isDirectory()) for (const name of fs.readdirSync(file)) walk(path.join(file, name));
  };
  walk(dir);
  return open;
}

/** Files as an older version, or an administrator's copy, left them: world-readable in open directories. */
function plantOpenFile(base: string, relative: string, contents: string) {
  const file = path.join(base, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
  for (let dir = path.dirname(file); dir.startsWith(base); dir = path.dirname(dir)) fs.chmodSync(dir, 0o755);
  fs.writeFileSync(file, contents, { mode: 0o644 });
  fs.chmodSync(file, 0o644);
}

for (const backend of testBackends()) {
  describe(`DATA_DIR is closed to every customer (${backend})`, () => {
    const username = `dd${randomBytes(4).toString("hex")}`;
    const domain = `${username}.example`;
    let database: TestDatabase;
    let server: TestServer;
    let adminKey: Credentials;
    let dataDir: string;

    before(async () => {
      createdUsers.push(username);
      database = await createTestDatabase(backend);
      const connection = await database.open();
      adminKey = await makeKey(connection.db, { scope: "admin" });
      await connection.close();
      // PGlite: the test's copy of a cluster, opened as an older version left it. PostgreSQL: a
      // DATA_DIR the panel makes itself at its first start.
      dataDir = backend === "pglite" ? database.env.DATA_DIR : path.join(root, "data-postgres");
      if (backend === "pglite") {
        fs.chmodSync(dataDir, 0o755);
        for (const dir of ["pglite", "pglite/pg_wal"]) fs.chmodSync(path.join(dataDir, dir), 0o755);
        fs.chmodSync(path.join(dataDir, "pglite", "pg_wal", "000000010000000000000001"), 0o666);
      }
      plantOpenFile(dataDir, `certs/${domain}/fullchain.pem`, "-----BEGIN CERTIFICATE-----\n");
      plantOpenFile(dataDir, `certs/${domain}/privkey.pem`, "-----BEGIN PRIVATE KEY-----\nthe site's key\n");
      plantOpenFile(dataDir, "backup-password", "the repository's password\n");
      // Another web server's access log (without WEB_SERVER the visitor statistics read ACCESS_LOG_DIR, in DATA_DIR by default).
      plantOpenFile(
        dataDir,
        `logs/${username}/${domain}.log`,
        `192.0.2.7 - - [10/Oct/2026:13:55:36 +0000] "GET /secret-page HTTP/1.1" 200 42 "-" "curl/8.0"\n`,
      );
      server = await startServer({
        ...database.env,
        DATA_DIR: dataDir,
        ZONES_DIR: path.join(dataDir, "zones"),
        SYSTEM_USERS: "1",
        HOME_ROOT: path.join(root, `home-${backend}`),
      });
    });
    after(async () => {
      await server?.stop();
      await database?.drop();
    });

    test("the customer's own process reads nothing of DATA_DIR: PGlite's WAL, zone files, visitor statistics, certificates, the backup password", async () => {
      const admin = apiClient(server.baseUrl, adminKey);
      const created = await admin.post("/api/admin/accounts", { username, domain, plan: "default" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const stats = await apiClient(server.baseUrl, adminKey, created.body.id).get("/api/client/account/visitor-stats");
      assert.equal(stats.status, 200, JSON.stringify(stats.body));

      const secrets = [
        path.join(dataDir, "zones", `${domain}.zone`),
        path.join(dataDir, "visitor-stats", `${username}.json`),
        path.join(dataDir, "certs", domain, "privkey.pem"),
        path.join(dataDir, "certs", domain, "fullchain.pem"),
        path.join(dataDir, "backup-password"),
        path.join(dataDir, "logs", username, `${domain}.log`),
        ...(backend === "pglite" ? [path.join(dataDir, "pglite", "pg_wal", "000000010000000000000001")] : []),
      ];
      for (const file of secrets) assert.ok(fs.existsSync(file), `${file} is there (as root)`);
      const read = secrets.filter((file) => asCustomer(username, "head", "-c", "64", "--", file).status === 0);
      assert.deepEqual(read.map((file) => path.relative(dataDir, file)), [], "files the customer read");
      for (const file of secrets) assert.match(asCustomer(username, "head", "-c", "64", "--", file).output, /Permission denied/, file);
      const listed = [dataDir, path.join(dataDir, "zones"), path.join(dataDir, "visitor-stats")].filter((dir) => asCustomer(username, "ls", "--", dir).status === 0);
      assert.deepEqual(listed, [], "directories the customer listed");
    });

    test("DATA_DIR is 0700 and nothing in it is open to its group or to others, files the server wrote since its start included", () => {
      assert.equal(fs.statSync(dataDir).mode & 0o777, 0o700);
      assert.deepEqual(openEntries(dataDir), []);
    });
  });
}
