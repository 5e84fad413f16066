import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import mysql from "mysql2/promise";
import type { Database } from "@/db/client";
import { backupPanelEnv, backUp } from "../support/backups";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey } from "../support/seed";
import { makeChrootableRoot } from "../support/ssh-server";
import { removeLinuxUsers } from "../support/web-servers";

// Attack: a database restore that makes the customer MariaDB's superuser (issue 29, item 2).
// alice's own database user writes a stored procedure whose body, read by a client that drops
// lines starting with USE, flips what is quoted and runs her `\g GRANT ALL PRIVILEGES ON *.* …\g`
// as whoever loads the dump. And her database holds a view and a procedure with
// `DEFINER=root@localhost SQL SECURITY DEFINER` reading bob's database (put there by someone
// with the rights: an old admin, a migration): restored as they are, they hand alice root's
// reach. After each restore: alice's user has exactly the grants it had, reads nothing of bob's
// (directly, through a view, through a procedure), and no object of her database has a definer
// that is not one of her own users; her tables are back.
//
// One panel storage backend (the first of TEST_BACKENDS): the attack is on the dump and its
// load, not on the panel's database.

const MYSQL_URL = process.env.TEST_MYSQL_URL ?? "mysql://root@127.0.0.1:3306";
const root = makeChrootableRoot("dump-definers");
const createdUsers: string[] = [];

after(() => {
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

const seed = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });

for (const backend of machineBackends("postgres")) {
  describe(`a database restore of a dump written to attack its loader (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const suffix = randomBytes(3).toString("hex");
    const alice = { username: `da${suffix}`, id: 0 };
    const bob = { username: `db${suffix}`, id: 0 };
    const shop = `${alice.username}_shop`;
    const reports = `${alice.username}_reports`;
    const vault = `${bob.username}_vault`;
    const aliceUser = `${alice.username}_app`;
    const alicePassword = `Alice-${randomBytes(8).toString("hex")}`;
    let server: mysql.Connection;
    let run = "";
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const as = (account: { id: number }) => apiClient(env.server.baseUrl, env.seed.adminKey, account.id);
    const grantsOfAlice = async () => ((await server.query(`SHOW GRANTS FOR ?@'%'`, [aliceUser])) as [Record<string, string>[], unknown])[0].map((row) => Object.values(row)[0]).sort();
    let grantsBefore: string[] = [];

    /** As alice's own database user: what she can reach. */
    async function asAlice<T>(work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
      const connection = await mysql.createConnection({ uri: MYSQL_URL, user: aliceUser, password: alicePassword, database: shop, multipleStatements: false });
      try {
        return await work(connection);
      } finally {
        await connection.end();
      }
    }

    /** Every routine, view, trigger and event of `database` with its definer. */
    async function definers(database: string): Promise<string[]> {
      const [rows] = (await server.query(
        `SELECT CONCAT(ROUTINE_TYPE, ' ', ROUTINE_NAME, ' ', DEFINER) AS o FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?
         UNION ALL SELECT CONCAT('VIEW ', TABLE_NAME, ' ', DEFINER) FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ?
         UNION ALL SELECT CONCAT('TRIGGER ', TRIGGER_NAME, ' ', DEFINER) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?
         UNION ALL SELECT CONCAT('EVENT ', EVENT_NAME, ' ', DEFINER) FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ?`,
        [database, database, database, database],
      )) as [{ o: string }[], unknown];
      return rows.map((row) => row.o).sort();
    }

    /** What the attacks would have given alice: none of it; `table` (100 rows) is back in `database`. */
    async function assertNothingGained(database: string, table: string, what: string) {
      assert.deepEqual(await grantsOfAlice(), grantsBefore, `${what}: alice's grants changed`);
      for (const definer of await definers(database)) {
        assert.match(definer, new RegExp(` ${aliceUser}@%$`), `${what}: an object whose definer is not alice's own user: ${definer}`);
      }
      await asAlice(async (connection) => {
        await assert.rejects(connection.query(`SELECT * FROM \`${vault}\`.secrets`), /denied/i, `${what}: bob's table readable`);
        // A database made by the restore is not granted to her user: then nothing in it is hers to call.
        const entered = await connection.query(`USE \`${database}\``).then(
          () => true,
          (error: Error) => (/denied/i.test(error.message) ? false : Promise.reject(error)),
        );
        if (!entered) return;
        await assert.rejects(connection.query("SELECT * FROM peek"), /denied|doesn't exist|does not exist/i, `${what}: bob's table readable through a view`);
        await assert.rejects(connection.query("CALL fetch_secret()"), /denied|does not exist/i, `${what}: bob's table readable through a procedure`);
      });
      const [rows] = (await server.query(`SELECT COUNT(*) AS n FROM \`${database}\`.\`${table}\``)) as [{ n: number }[], unknown];
      assert.equal(rows[0].n, 100, `${what}: the table is back`);
    }

    /** Root's view and procedure reading bob's table, in `database` (made with root's rights, as an admin could have). */
    async function plantRootObjects(database: string) {
      await server.query(`CREATE OR REPLACE DEFINER=root@localhost SQL SECURITY DEFINER VIEW \`${database}\`.peek AS SELECT secret FROM \`${vault}\`.secrets`);
      await server.query(`CREATE OR REPLACE DEFINER=root@localhost PROCEDURE \`${database}\`.fetch_secret() SQL SECURITY DEFINER SELECT secret FROM \`${vault}\`.secrets`);
    }
    async function removeRootObjects(database: string) {
      await server.query(`DROP VIEW IF EXISTS \`${database}\`.peek`);
      await server.query(`DROP PROCEDURE IF EXISTS \`${database}\`.fetch_secret`);
    }

    /** The restore's answer, once what it gave alice is checked (even when the answer itself is wrong). */
    async function restoreAndCheck(runId: string, body: { database: string; into?: string }, table: string, what: string) {
      const restored = await as(alice).post(`/api/client/backups/${runId}/restore`, body).catch((error: Error) => error);
      const answer = restored instanceof Error ? restored.message : `${restored.status} ${JSON.stringify(restored.body)}`;
      // A failed check says what the restore answered too (CI run 40: the copy's table was missing, the answer unknown).
      await assertNothingGained(body.into ? `${alice.username}_${body.into}` : body.database, table, what).catch((error: Error) => {
        throw new Error(`${error.message}; the restore answered: ${answer}`, { cause: error });
      });
      if (restored instanceof Error) throw restored;
      assert.equal(restored.status, 200, JSON.stringify(restored.body));
      return restored.body as { message: string };
    }

    before(async () => {
      createdUsers.push(alice.username, bob.username);
      env = await createEnvironment(backend, seed, backupPanelEnv(root, backend, MYSQL_URL));
      server = await mysql.createConnection({ uri: MYSQL_URL, multipleStatements: false });
      for (const account of [alice, bob]) {
        const created = await admin().post("/api/admin/accounts", { username: account.username, domain: `${account.username}.example` });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        account.id = created.body.id;
      }
      const user = await as(alice).post("/api/client/database-users", { username: "app", password: alicePassword });
      assert.equal(user.status, 201, JSON.stringify(user.body));
      for (const name of ["shop", "reports"]) {
        const database = await as(alice).post("/api/client/databases", { database_name: name });
        assert.equal(database.status, 201, JSON.stringify(database.body));
        assert.equal((await as(alice).post(`/api/client/database-users/${user.body.id}/assign-database`, { database_id: database.body.id })).status, 200);
      }
      assert.equal((await as(bob).post("/api/client/databases", { database_name: "vault" })).status, 201);
      await server.query(`CREATE TABLE \`${vault}\`.secrets (secret VARCHAR(40))`);
      await server.query(`INSERT INTO \`${vault}\`.secrets VALUES ('bob-secret')`);

      // alice, as her own database user: a table in each, and in shop the procedure whose body is the trick.
      await asAlice(async (connection) => {
        for (const table of ["orders", `\`${reports}\`.daily`]) {
          await connection.query(`CREATE TABLE ${table} (id INT PRIMARY KEY)`);
          await connection.query(`INSERT INTO ${table} VALUES ${Array.from({ length: 100 }, (_, i) => `(${i + 1})`).join(",")}`);
        }
        await connection.query(
          `CREATE PROCEDURE trick()\nSELECT 'a\nUSE b'\n, 'x;;\n\\g GRANT ALL PRIVILEGES ON *.* TO \`${aliceUser}\`@\`%\` WITH GRANT OPTION\\g\n'`,
        );
      });
      await plantRootObjects(reports);
      grantsBefore = await grantsOfAlice();
      run = await backUp(admin(), alice.id);
      // Then gone from the live database: a restore would make them again.
      await removeRootObjects(reports);
    });
    after(async () => {
      for (const account of [alice, bob]) await admin().delete(`/api/admin/accounts/${account.id}`).catch(() => undefined);
      await server?.query(`DROP USER IF EXISTS ?@'%'`, [aliceUser]).catch(() => undefined);
      await server?.end();
      await env?.teardown();
    });

    test("a view and a procedure with DEFINER=root@localhost SQL SECURITY DEFINER in the dump: not made again with root's rights; named as not brought back", async () => {
      const { message } = await restoreAndCheck(run, { database: reports }, "daily", "root's objects restored in place");
      for (const name of ["peek", "fetch_secret"]) assert.match(message, new RegExp(`\\b${name}\\b`), `${name} named as not brought back`);
    });

    test("the procedure trick (USE b' and \\g GRANT … \\g in its body), restored into its own database: no grant gained, bob's data out of reach", async () => {
      const { message } = await restoreAndCheck(run, { database: shop }, "orders", "the trick restored in place");
      assert.match(message, /\btrick\b/, "the procedure named as not brought back (its definer is alice's user, which a restore does not act as)");
    });

    test("both restored into another name of the account's: the same", async () => {
      await restoreAndCheck(run, { database: shop, into: "shop_copy" }, "orders", "the trick into another name");
      await restoreAndCheck(run, { database: reports, into: "reports_copy" }, "daily", "root's objects into another name");
      for (const name of ["shop_copy", "reports_copy"]) {
        const copy = (await as(alice).get("/api/client/databases")).body.find((d: { database_name: string }) => d.database_name === `${alice.username}_${name}`);
        assert.equal((await as(alice).delete(`/api/client/databases/${copy.id}`)).status, 200);
      }
    });

    test("dumps made the old way (--databases: CREATE DATABASE and USE of their own name) load into their database and into another name, with the same outcome", async () => {
      // A run as the panel wrote them before: dumps with --databases, beside the run's records.
      await plantRootObjects(reports);
      const oldDump = (database: string) => execFileSync("mariadb-dump", ["-h", "127.0.0.1", "-u", "root", "--single-transaction", "--routines", "--triggers", "--events", "--databases", database]);
      const dumps = { [shop]: oldDump(shop), [reports]: oldDump(reports) };
      await removeRootObjects(reports);
      const restic = (args: string[], input?: Buffer) =>
        execFileSync("restic", args, {
          input,
          env: { ...process.env, RESTIC_REPOSITORY: path.join(root, `repository-${backend}`), RESTIC_PASSWORD_FILE: path.join(root, `backup-password-${backend}`), RESTIC_CACHE_DIR: path.join(root, "cache") },
        });
      const snapshots = JSON.parse(restic(["snapshots", "--no-lock", "--json", "--tag", `run:${run}`]).toString()) as { id: string; tags: string[] }[];
      const records = restic(["dump", "--no-lock", snapshots.find((snapshot) => snapshot.tags.includes("part:records"))!.id, "/records.json"]);
      const oldRun = "20000101-000000000";
      const tags = [`account-id:${alice.id}`, `account:${alice.username}`, `run:${oldRun}`].flatMap((tag) => ["--tag", tag]);
      for (const [database, dump] of Object.entries(dumps)) restic(["backup", "--stdin", "--stdin-filename", `${database}.sql`, ...tags, "--tag", `db:${database}`], dump);
      restic(["backup", "--stdin", "--stdin-filename", "records.json", ...tags, "--tag", "part:records"], records);

      await restoreAndCheck(oldRun, { database: reports }, "daily", "an old dump of root's objects in place");
      await restoreAndCheck(oldRun, { database: shop }, "orders", "an old dump of the trick in place");
      await restoreAndCheck(oldRun, { database: reports, into: "old_reports" }, "daily", "an old dump of root's objects into another name");
      await restoreAndCheck(oldRun, { database: shop, into: "old_shop" }, "orders", "an old dump of the trick into another name");
      const [names] = (await server.query(`SHOW DATABASES LIKE '${alice.username}\\_%'`)) as [Record<string, string>[], unknown];
      assert.deepEqual(names.map((row) => Object.values(row)[0]).sort(), [`${alice.username}_old_reports`, `${alice.username}_old_shop`, reports, shop], "nothing made under another name");
      for (const name of ["old_shop", "old_reports"]) {
        const copy = (await as(alice).get("/api/client/databases")).body.find((d: { database_name: string }) => d.database_name === `${alice.username}_${name}`);
        assert.equal((await as(alice).delete(`/api/client/databases/${copy.id}`)).status, 200);
      }
    });

    test("no temporary loader is left on the server after the restores", async () => {
      const [users] = (await server.query("SELECT User FROM mysql.user WHERE User LIKE 'panel\\_load\\_%'")) as [{ User: string }[], unknown];
      assert.deepEqual(users, []);
    });
  });
}

