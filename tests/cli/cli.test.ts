import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { and, eq, like } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import postgres from "postgres";
import { adminRecoveryCodes, adminUsers, auditLog } from "@/db/schema";
import { verifyPassword } from "@/lib/admins/password";
import { beginTwoFactorSetup, confirmTwoFactorSetup } from "@/lib/admins/two-factor";
import { createPreparedTestDatabase, createTestDatabase, type TestDatabase, testBackends } from "../support/database";
import { type CliResult, runPanel } from "../support/cli";
import { apiClient } from "../support/http";
import { startServer } from "../support/server";

// The `panel` command line as an operator runs it: a subprocess, on PGlite and PostgreSQL.

/** --json prints exactly one JSON object on one line. */
function onlyJsonObject(result: CliResult) {
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, `one line: ${result.stdout}`);
  const value = JSON.parse(lines[0]);
  assert.equal(typeof value, "object");
  assert.ok(value && !Array.isArray(value));
  return value;
}

/** Nothing from this process's environment says where the database is, nor names a file. */
const unconfigured = { DATABASE_URL: undefined, DATA_DIR: undefined, ZONES_DIR: undefined, PANEL_ENV_FILE: undefined };

/** The lines of a configuration file naming `database`. */
const envFileFor = (database: TestDatabase) =>
  ["DATABASE_URL", "DATA_DIR", "ZONES_DIR"]
    .filter((name) => database.env[name] !== undefined)
    .map((name) => `${name}=${database.env[name]}\n`)
    .join("");

/** Writes panel.env where the rule says, the working directory (the project's, as npm sets it), for the time of `use`. */
async function withProjectEnvFile(content: string, use: () => Promise<void>): Promise<void> {
  const file = path.join(process.cwd(), "panel.env");
  assert.ok(!fs.existsSync(file), `${file} exists: move it away to run this test`);
  // 0600: the panel refuses a configuration file its group or others may read.
  fs.writeFileSync(file, content, { mode: 0o600 });
  try {
    await use();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

const NO_DATABASE = /^No panel database at (.+); start the panel once \(npm start creates it and, on a fresh install, prints a link that sets up the first admin\) or set DATABASE_URL/;

test("with no database configured the command line says so, exits 2 and creates nothing", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-cli-nothing-"));
  try {
    const missing = path.join(root, "data");
    for (const args of [["php", "list"], ["admin", "create", "--email", "a@example.com", "--password", "long enough pw"]]) {
      const result = await runPanel({ ...unconfigured, DATA_DIR: missing, PANEL_ENV_FILE: "/dev/null" }, ...args, "--json");
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stdout, "");
      assert.equal(result.stderr.match(NO_DATABASE)?.[1], missing, result.stderr);
    }
    assert.deepEqual(fs.readdirSync(root), [], "no data dir created");

    const empty = fs.mkdtempSync(path.join(root, "empty-"));
    const result = await runPanel({ ...unconfigured, DATA_DIR: empty, PANEL_ENV_FILE: "/dev/null" }, "account", "list");
    assert.equal(result.code, 2);
    assert.match(result.stderr, NO_DATABASE);
    assert.deepEqual(fs.readdirSync(empty), [], "nothing created in an existing empty data dir");
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("a bad configuration file stops the command line with its name and line", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-cli-envfile-"));
  try {
    const file = path.join(root, "panel.env");
    for (const [content, message] of [
      ["# the panel\nDATA_DIR=/srv/panel\nPORT 3000\n", "line 3: expected NAME=value"],
      ["DATABSE_URL=postgres://db/panel\n", "line 1: unknown setting DATABSE_URL"],
      ["PORT=3000\nPORT=3001\n", "line 2: PORT is already set on line 1"],
      ['AUTH_SECRET="not closed\n', "line 1: the value of AUTH_SECRET opens a quote it does not close"],
      ["AUTH_SECRET=abc#def\n", "line 1: quote the value of AUTH_SECRET"],
    ]) {
      fs.writeFileSync(file, content, { mode: 0o600 });
      const result = await runPanel({ ...unconfigured, PANEL_ENV_FILE: file }, "php", "list");
      assert.equal(result.code, 2, content);
      assert.equal(result.stdout, "");
      assert.ok(result.stderr.startsWith(`Invalid configuration file ${file}, ${message}`), result.stderr);
    }
    const absent = await runPanel({ ...unconfigured, PANEL_ENV_FILE: path.join(root, "nope.env") }, "php", "list");
    assert.equal(absent.code, 2);
    assert.match(absent.stderr, /Cannot read the configuration file .*nope\.env \(PANEL_ENV_FILE\): ENOENT/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

for (const backend of testBackends()) {
  describe(`the command line and the server read one configuration (${backend})`, () => {
    let database: TestDatabase | undefined;
    let root: string;
    before(async () => {
      if (backend === "postgres") database = await createTestDatabase(backend);
      root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-cli-config-"));
    });
    after(async () => {
      await database?.drop();
      if (root) fs.rmSync(root, { recursive: true, force: true });
    });

    test("a server started from a configuration file creates the database the command line then finds there", async () => {
      // PGlite: a data dir that does not exist yet; PostgreSQL: a database without tables.
      const place = backend === "pglite" ? `DATA_DIR=${path.join(root, "data")}\n` : `DATABASE_URL=${database!.env.DATABASE_URL}\nDATA_DIR=${path.join(root, "data")}\n`;
      const file = path.join(root, "server.env");
      fs.writeFileSync(file, `# written by the test\n${place}ZONES_DIR=${path.join(root, "zones")}\n`, { mode: 0o600 });

      const beforeStart = await runPanel({ ...unconfigured, PANEL_ENV_FILE: file }, "admin", "list");
      assert.equal(beforeStart.code, 2, "no database before the first start");
      assert.match(beforeStart.stderr, NO_DATABASE);

      const server = await startServer({ ...unconfigured, PANEL_ENV_FILE: file });
      try {
        assert.match(server.output(), backend === "pglite" ? /storage: pglite/ : /storage: postgres/);
      } finally {
        await server.stop();
      }
      const created = onlyJsonObject(await runPanel({ ...unconfigured, PANEL_ENV_FILE: file }, "admin", "create", "--email", "first@example.com", "--password", "long enough pw", "--json"));
      assert.equal(created.email, "first@example.com");
      const listed = onlyJsonObject(await runPanel({ ...unconfigured, PANEL_ENV_FILE: file }, "admin", "list", "--json"));
      assert.deepEqual(listed.admins.map((admin: { email: string }) => admin.email), ["first@example.com"]);
    });

    if (backend === "postgres") {
      test("a PostgreSQL database without the panel's tables (or none at all) is refused, and left without tables", async () => {
        const empty = await createTestDatabase("postgres");
        try {
          const result = await runPanel({ ...unconfigured, DATABASE_URL: empty.env.DATABASE_URL }, "php", "add", "--version", "8.3");
          assert.equal(result.code, 2, result.stderr);
          assert.match(result.stderr, NO_DATABASE);
          const connection = postgres(empty.env.DATABASE_URL, { max: 1, onnotice: () => {} });
          try {
            const [{ count }] = await connection`select count(*)::int as count from information_schema.tables where table_schema in ('public', 'drizzle')`;
            assert.equal(count, 0, "no table created");
          } finally {
            await connection.end();
          }
        } finally {
          await empty.drop();
        }
        const url = new URL(database!.env.DATABASE_URL);
        url.pathname = "/panel_test_no_such_database";
        const missing = await runPanel({ ...unconfigured, DATABASE_URL: url.toString() }, "php", "list");
        assert.equal(missing.code, 2, missing.stderr);
        assert.equal(missing.stderr.match(NO_DATABASE)?.[1], url.toString());
      });
    }
  });
}

for (const backend of testBackends()) {
  describe(`command line (${backend})`, () => {
    let database: TestDatabase;
    const run = (...args: string[]) => runPanel(database.env, ...args);

    before(async () => {
      database = await createPreparedTestDatabase(backend);
    });
    after(async () => {
      await database?.drop();
    });

    test("creates an admin, a plan, a reseller, an account with its domain, PHP versions", async () => {
      const admin = onlyJsonObject(await run("admin", "create", "--email", "ops@example.com", "--password", "long enough pw", "--json"));
      assert.equal(admin.email, "ops@example.com");
      assert.equal(admin.password_hash, undefined);
      const plan = onlyJsonObject(
        await run("plan", "create", "--name", "small", "--max-databases", "3", "--max-domains", "2", "--max-db-users", "4", "--disk-mb", "500", "--json"),
      );
      assert.deepEqual([plan.max_databases, plan.max_domains, plan.max_database_users, plan.disk_mb], [3, 2, 4, 500]);
      const reseller = onlyJsonObject(await run("reseller", "create", "--username", "acme", "--json"));
      assert.equal(reseller.username, "acme");
      const account = onlyJsonObject(
        await run("account", "create", "--username", "shop", "--domain", "shop.example", "--plan", "small", "--reseller", "acme", "--email", "o@shop.example", "--json"),
      );
      assert.equal(account.domain, "shop.example");
      assert.equal(account.plan.name, "small");
      assert.equal(account.reseller_id, reseller.id);
      const plain = onlyJsonObject(await run("account", "create", "--username", "plain", "--domain", "plain.example", "--json"));
      assert.equal(plain.plan.name, "default", "the default plan");
      const php = onlyJsonObject(await run("php", "add", "--version", "8.3", "--json"));
      assert.deepEqual(Object.keys(php).sort(), ["id", "version"]);
      const list = onlyJsonObject(await run("php", "list", "--json"));
      // Known to the panel, not installed here (CI installs php8.2-fpm only): /usr/sbin/php-fpm8.3 is missing.
      assert.deepEqual(list.php_versions, [{ ...php, installed: false }]);
    });

    test("key create prints the secret once; key list never does; disable, enable, delete", async () => {
      const created = onlyJsonObject(
        await run("key", "create", "--name", "billing", "--account", "shop", "--ip", "10.0.0.0/8", "--ip", "::1", "--endpoint", "GET /api/client/account", "--json"),
      );
      assert.match(created.key, /^hcp_[0-9A-Za-z]+$/);
      assert.ok(created.secret.length >= 40);
      assert.deepEqual(created.allowed_ips, ["10.0.0.0/8", "::1"]);
      assert.deepEqual(created.allowed_endpoints, ["GET /api/client/account"]);
      assert.equal(created.allow_all_endpoints, false);
      const list = await run("key", "list", "--json");
      assert.ok(!list.stdout.includes(created.secret), "the secret is never listed");
      assert.equal(onlyJsonObject(list).keys.length, 1);
      assert.equal(onlyJsonObject(await run("key", "disable", String(created.id), "--json")).is_enabled, false);
      assert.equal(onlyJsonObject(await run("key", "enable", String(created.id), "--json")).is_enabled, true);
      assert.deepEqual(onlyJsonObject(await run("key", "delete", String(created.id), "--json")), { id: created.id, deleted: true });
      assert.equal(onlyJsonObject(await run("key", "list", "--json")).keys.length, 0);
    });

    test("account list, suspend --reason, unsuspend, delete; a reserved username is refused", async () => {
      const listed = onlyJsonObject(await run("account", "list", "--json"));
      assert.deepEqual(listed.accounts.map((account: { username: string }) => account.username), ["plain", "shop"]);
      const text = await run("account", "list");
      assert.match(text.stdout, /\tshop\tshop\.example\tsmall\tactive/);

      const suspended = onlyJsonObject(await run("account", "suspend", "plain", "--reason", "Invoice 12 unpaid", "--json"));
      assert.deepEqual([suspended.username, suspended.status, suspended.suspension_reason], ["plain", "suspended", "Invoice 12 unpaid"]);
      assert.deepEqual(onlyJsonObject(await run("account", "suspend", "plain", "--json")), suspended, "already suspended: unchanged");
      const active = onlyJsonObject(await run("account", "unsuspend", "plain", "--json"));
      assert.deepEqual([active.status, active.suspension_reason], ["active", null]);

      const temporary = onlyJsonObject(await run("account", "create", "--username", "brief", "--domain", "brief.example", "--json"));
      assert.deepEqual(onlyJsonObject(await run("account", "delete", "brief", "--json")), { id: temporary.id, username: "brief", deleted: true });
      assert.deepEqual(
        onlyJsonObject(await run("account", "list", "--json")).accounts.map((account: { username: string }) => account.username),
        ["plain", "shop"],
      );

      const reserved = await run("account", "create", "--username", "postgres", "--domain", "pg.example", "--json");
      assert.equal(reserved.code, 1);
      assert.match(reserved.stderr, /username: is reserved by the server/);
      for (const args of [["account", "suspend", "nobody_here"], ["account", "delete"], ["account", "unsuspend", "brief"]]) {
        const result = await run(...args, "--json");
        assert.notEqual(result.code, 0, args.join(" "));
        assert.equal(result.stdout, "");
      }
    });

    test("panel.env in the working directory names the server's database; the environment wins over it", async () => {
      await withProjectEnvFile(envFileFor(database), async () => {
        const listed = onlyJsonObject(await runPanel(unconfigured, "account", "list", "--json"));
        assert.deepEqual(listed.accounts.map((account: { username: string }) => account.username), ["plain", "shop"]);
      });
      const elsewhere = path.join(os.tmpdir(), `panel-cli-nowhere-${process.pid}`);
      await withProjectEnvFile(`DATABASE_URL=postgres://127.0.0.1:1/nowhere\nDATA_DIR=${elsewhere}\n`, async () => {
        // Set, even to an empty string (PGlite: no DATABASE_URL), beats the file.
        const fromEnvironment = { ...unconfigured, DATABASE_URL: database.env.DATABASE_URL ?? "", DATA_DIR: database.env.DATA_DIR };
        const listed = onlyJsonObject(await runPanel(fromEnvironment, "account", "list", "--json"));
        assert.deepEqual(listed.accounts.map((account: { username: string }) => account.username), ["plain", "shop"]);
        assert.equal(fs.existsSync(elsewhere), false);
      });
    });

    test("errors go to stderr with a non-zero exit and nothing on stdout", async () => {
      for (const args of [
        ["account", "create", "--username", "shop", "--domain", "other.example"],
        ["account", "create", "--username", "x1", "--domain", "not a domain"],
        ["account", "create", "--username", "x2", "--domain", "x2.example", "--plan", "nope"],
        ["key", "create", "--name", "k", "--admin", "--account", "shop"],
        ["key", "create", "--name", "k", "--admin", "--ip", "300.1.1.1"],
        ["key", "create", "--name", "k", "--admin", "--endpoint", "GET /api/nope"],
        ["key", "disable", "999"],
        ["plan", "create", "--name", "p", "--max-databases", "lots"],
        ["frobnicate"],
      ]) {
        const result = await run(...args, "--json");
        assert.notEqual(result.code, 0, args.join(" "));
        assert.equal(result.stdout, "", args.join(" "));
        assert.ok(result.stderr.trim().length > 0, args.join(" "));
      }
    });

    test("admin list, disable, enable, password; the last enabled admin stays enabled; all audited", async () => {
      const second = onlyJsonObject(await run("admin", "create", "--email", "second@example.com", "--password", "second long pw", "--json"));
      const { admins } = onlyJsonObject(await run("admin", "list", "--json"));
      assert.deepEqual(
        admins.map((admin: { email: string; is_enabled: boolean }) => [admin.email, admin.is_enabled]),
        [["ops@example.com", true], ["second@example.com", true]],
      );
      assert.equal(onlyJsonObject(await run("admin", "disable", String(second.id), "--json")).is_enabled, false);
      const first = admins[0].id;
      const refused = await run("admin", "disable", String(first), "--json");
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /is_enabled: cannot be turned off for the last enabled admin/);
      assert.equal(onlyJsonObject(await run("admin", "enable", String(second.id), "--json")).is_enabled, true);
      const changed = onlyJsonObject(await run("admin", "password", "--email", "SECOND@example.com", "--password", "a new long pw", "--json"));
      assert.equal(changed.id, second.id);
      assert.equal(changed.password_hash, undefined);
      const unknown = await run("admin", "password", "--email", "nobody@example.com", "--password", "a new long pw");
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /Admin not found/);

      const connection = await database.open();
      try {
        const [{ hash }] = await connection.db.select({ hash: adminUsers.passwordHash }).from(adminUsers).where(eq(adminUsers.id, second.id));
        assert.equal(await verifyPassword("a new long pw", hash), true);
        const actions = await connection.db
          .select({ action: auditLog.action })
          .from(auditLog)
          .where(and(eq(auditLog.actorType, "cli"), eq(auditLog.targetId, second.id), like(auditLog.action, "admin_user.%")));
        assert.deepEqual(actions.map((row) => row.action).sort(), ["admin_user.create", "admin_user.disable", "admin_user.enable", "admin_user.password"]);
      } finally {
        await connection.close();
      }
    });

    test("admin 2fa reset ID turns two-factor sign-in off, drops the recovery codes and ends the admin's sessions", async () => {
      const lost = onlyJsonObject(await run("admin", "create", "--email", "lost-device@example.com", "--password", "lost device pw", "--json"));
      assert.equal(lost.two_factor, false);
      const connection = await database.open();
      let generationBefore: number;
      try {
        const { secret } = await beginTwoFactorSetup(connection.db, lost.id);
        const code = new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate();
        await confirmTwoFactorSetup(connection.db, lost.id, { code });
        [{ generationBefore }] = await connection.db.select({ generationBefore: adminUsers.sessionGeneration }).from(adminUsers).where(eq(adminUsers.id, lost.id));
      } finally {
        await connection.close();
      }
      const listed = onlyJsonObject(await run("admin", "list", "--json")).admins.find((admin: { id: number }) => admin.id === lost.id);
      assert.equal(listed.two_factor, true);

      const reset = onlyJsonObject(await run("admin", "2fa", "reset", String(lost.id), "--json"));
      assert.deepEqual(reset, { ...lost, two_factor: false });
      const text = await run("admin", "2fa", "reset", String(lost.id));
      assert.equal(text.code, 0, "resetting again is harmless");
      assert.match(text.stdout, /lost-device@example\.com/);
      for (const args of [["admin", "2fa", "reset", "99999"], ["admin", "2fa", "reset"], ["admin", "2fa", "off", String(lost.id)], ["admin", "2fa"]]) {
        const refused = await run(...args, "--json");
        assert.notEqual(refused.code, 0, args.join(" "));
        assert.equal(refused.stdout, "", args.join(" "));
      }

      const after = await database.open();
      try {
        const [row] = await after.db.select().from(adminUsers).where(eq(adminUsers.id, lost.id));
        assert.deepEqual([row.totpSecret, row.totpPendingSecret, row.totpLastStep], [null, null, null]);
        assert.ok(row.sessionGeneration > generationBefore, "the admin's sessions have ended");
        assert.equal((await after.db.select().from(adminRecoveryCodes).where(eq(adminRecoveryCodes.adminUserId, lost.id))).length, 0);
        const actions = await after.db
          .select({ action: auditLog.action })
          .from(auditLog)
          .where(and(eq(auditLog.actorType, "cli"), eq(auditLog.targetId, lost.id), eq(auditLog.action, "admin_user.two_factor_reset")));
        assert.equal(actions.length, 2);
      } finally {
        await after.close();
      }
    });

    test("key create --admin --owner EMAIL makes the key that admin's, without it the first admin's; --owner takes an admin's e-mail, for admin keys only", async () => {
      const owned = onlyJsonObject(await run("key", "create", "--name", "ops sso", "--admin", "--owner", "ops@example.com", "--json"));
      assert.equal(owned.owner_email, "ops@example.com");
      const [first] = onlyJsonObject(await run("admin", "list", "--json")).admins;
      assert.equal(onlyJsonObject(await run("key", "create", "--name", "no owner", "--admin", "--json")).owner_email, first.email);
      const unknown = await run("key", "create", "--name", "x", "--admin", "--owner", "nobody@example.com");
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /No admin with the email nobody@example.com/);
      const notAdmin = await run("key", "create", "--name", "x", "--account", "shop", "--owner", "ops@example.com");
      assert.equal(notAdmin.code, 2);
      assert.match(notAdmin.stderr, /--owner is for --admin keys/);
      for (const key of [owned, ...onlyJsonObject(await run("key", "list", "--json")).keys.filter((row: { name: string }) => row.name === "no owner")]) {
        await run("key", "delete", String(key.id));
      }
    });

    test("a key made on the command line works against the API", async () => {
      const created = onlyJsonObject(await run("key", "create", "--name", "ops", "--admin", "--json"));
      const server = await startServer(database.env);
      try {
        const response = await apiClient(server.baseUrl, created, "shop").get("/api/client/account");
        assert.equal(response.status, 200);
        assert.equal(response.body.username, "shop");
        if (backend === "pglite") {
          const locked = await run("key", "list");
          assert.equal(locked.code, 2);
          assert.match(locked.stderr, /in use by another panel process/);
        } else {
          const disabled = onlyJsonObject(await run("key", "disable", String(created.id), "--json"));
          assert.equal(disabled.is_enabled, false);
          assert.equal((await apiClient(server.baseUrl, created, "shop").get("/api/client/account")).status, 403);
        }
      } finally {
        await server.stop();
      }
    });
  });
}
