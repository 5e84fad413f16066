import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import type { Pool, PoolOptions } from "mysql2/promise";
import { isSystemDatabase, PANEL_DATABASE, PRIVILEGES } from "./rules";
import { env } from "@/lib/env";
import { AppError, validationError } from "@/lib/errors";
import { stopOnAbort } from "./stop-on-abort";
import { childExit, exitReason, readIfExists, startChild, toolEnv, writeAtomically } from "./system";

// Customer databases on a real MariaDB/MySQL server (MYSQL_PROVISION_URL). The only code that
// runs CREATE/DROP DATABASE, CREATE/DROP USER, GRANT and REVOKE. Identifiers are validated and
// back-quoted; user names, hosts and passwords travel as parameters; passwords are never logged
// nor put in an error message.
//
// Callers keep the panel's records and the server in step: the server step is the last step
// inside the record's transaction (a server failure rolls the record back), and a create whose
// commit then fails is undone on the server (lib/databases/service.ts).

/** An option file value in double quotes (the client reads `\\` and `\"` there as the characters). */
function optionValue(name: string, value: string): string {
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new Error(`MYSQL_PROVISION_URL's ${name} holds a control character`);
  return `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** A [client] option file: MYSQL_PROVISION_URL's server, as `user` with `password`. */
function optionFile(what: string, server: URL, user: string, password: string): string {
  return [
    `# Written by the hosting panel from MYSQL_PROVISION_URL: ${what}.`,
    "[client]",
    `host=${optionValue("host", server.hostname)}`,
    `port=${optionValue("port", server.port || "3306")}`,
    `user=${optionValue("user", user)}`,
    `password=${optionValue("password", password)}`,
    "",
  ].join("\n");
}

/**
 * The MariaDB command-line clients' connection to MYSQL_PROVISION_URL (mariadb-dump, mariadb):
 * their first argument, `--defaults-extra-file=` an option file of the panel's (DATA_DIR, 0600)
 * holding host, port, user and password. The password never travels in a child's arguments
 * (world-readable in /proc/<pid>/cmdline) nor its environment. null without MYSQL_PROVISION_URL.
 */
export async function mariadbClientOptions(): Promise<string | null> {
  const url = env().mysqlProvisionUrl;
  if (!url) return null;
  const parsed = new URL(url);
  const contents = optionFile("the MariaDB clients' connection", parsed, decodeURIComponent(parsed.username), decodeURIComponent(parsed.password));
  const file = path.join(env().dataDir, "mariadb-client.cnf");
  if ((await readIfExists(file)) !== contents) await writeAtomically(file, contents, 0o600);
  return `--defaults-extra-file=${file}`;
}

const IDENTIFIER = /^[A-Za-z0-9_]{1,64}$/;
const allowedPrivileges = new Set<string>(PRIVILEGES);

function identifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new AppError("VALIDATION", `"${name}" is not a valid database or user name`);
  return `\`${name}\``;
}

/**
 * A customer database's name, back-quoted: an identifier, and none of the server's own schemas
 * (rules.ts isSystemDatabase: mysql, information_schema, performance_schema, sys and the panel's
 * own, in any case) — whatever a record or a node's answer says, refused by name wherever a
 * database is made, dropped, granted, dumped or loaded (rights on `mysql` are rights on every
 * user of the server).
 */
export function databaseName(name: string): string {
  const quoted = identifier(name);
  if (isSystemDatabase(name)) throw new AppError("VALIDATION", `"${name}" is a database of the server itself (a system database), never a customer's`);
  return quoted;
}

/**
 * A database as GRANT and REVOKE name it. There `_` and `%` are wildcards: unescaped, a grant on
 * `a_b` would also open `axb` of another account. Names hold no `%` (IDENTIFIER), so `_` is escaped.
 */
const grantTarget = (name: string) => `${databaseName(name).replaceAll("_", "\\_")}.*`;

function privilegeList(privileges: string[]): string {
  if (privileges.length === 0 || !privileges.every((privilege) => allowedPrivileges.has(privilege))) {
    throw new AppError("VALIDATION", "Invalid privileges");
  }
  return privileges.join(", ");
}

/** mysql_native_password's hash: `*` and 40 hex digits (what IDENTIFIED BY PASSWORD takes). */
export const NATIVE_PASSWORD_HASH = /^\*[0-9A-F]{40}$/;

const UNREACHABLE = new Set(["ECONNREFUSED", "ETIMEDOUT", "ENOTFOUND", "EHOSTUNREACH", "PROTOCOL_CONNECTION_LOST", "ECONNRESET"]);

function serverError(operation: string, error: unknown): AppError {
  const { code, sqlMessage } = error as { code?: string; sqlMessage?: string };
  if (code && UNREACHABLE.has(code)) {
    // Still a 422: DESIGN.md "Real parts" answers every server-side failure so, as SPEC.md does.
    return new AppError("VALIDATION", `The database server is unavailable: could not ${operation}`);
  }
  if (code === "ER_DB_CREATE_EXISTS") return new AppError("VALIDATION", `Could not ${operation}: it already exists on the database server`);
  console.error(`[mysql] could not ${operation}: ${code ?? ""} ${sqlMessage ?? (error as Error).message}`);
  return new AppError("VALIDATION", `Could not ${operation}: ${sqlMessage ?? "the database server refused"}`);
}

/** A routine, view, trigger or event of a database, with its definer. */
export interface DatabaseObject {
  type: "PROCEDURE" | "FUNCTION" | "VIEW" | "TRIGGER" | "EVENT";
  name: string;
  definer: string;
}

export interface MysqlProvisioner {
  /**
   * The panel's schema made on the server, and the server claimed for this machine's node: a
   * server another node claimed first is refused (CONFLICT). Every other call does it first.
   */
  claim(): Promise<void>;
  /** Marks names the panel's records say it made before it marked them (./marks.ts adoptLegacyUsers). */
  adopt(databases: string[], users: string[]): Promise<void>;
  /** Those of the names that exist on the server without the panel's mark (only what the provisioning user may see). */
  foreignNames(databases: string[], users: string[]): Promise<{ databases: string[]; users: string[] }>;
  createDatabase(name: string): Promise<void>;
  dropDatabase(name: string): Promise<void>;
  /** Creates a user; a locked one cannot log in until unlocked (setUserLocked). */
  createUser(username: string, password: string, options: { locked: boolean }): Promise<void>;
  dropUser(username: string): Promise<void>;
  /** Locks (no new logins) or unlocks a user; a user missing on the server is left alone. */
  setUserLocked(username: string, locked: boolean): Promise<void>;
  /** The user's password hash as the server keeps it (a backup's records); null: no such user or no native hash. */
  passwordHash(username: string): Promise<string | null>;
  /** Gives the user the password whose hash this is (a restore: the customer's password, never seen by the panel). */
  setPasswordHash(username: string, hash: string): Promise<void>;
  /** Replaces the user's privileges on the database (revoke all, then grant these). */
  grant(username: string, database: string, privileges: string[]): Promise<void>;
  revoke(username: string, database: string): Promise<void>;
  /** Sizes in MB of the named databases (absent ones are left out). */
  databaseSizesMb(names: string[]): Promise<Map<string, number>>;
  /** The database's routines, views, triggers and events, each with its definer (`user@host`). */
  databaseObjects(database: string): Promise<DatabaseObject[]>;
  close(): Promise<void>;
}

// The panel's schema on each server it provisions (docs/security.md "The panel adopts nothing it
// did not make"): `marks` holds every database and user the panel made there (a row written before
// the CREATE, removed after the DROP), `server` the one node the server serves. A table of the
// server, not a comment: users have none, a customer may ALTER their own database's, and a table
// travels with a whole-server dump and restore (a customer's dump, of one database, never holds
// it; a customer has no right on it). The panel drops, alters, grants and loads only what is
// marked; a name that exists unmarked is a conflict, left as it is.

const PANEL_SCHEMA = `\`${PANEL_DATABASE}\``;

/** This machine's node, as the server's `server` row names it: `local` in the panel's process, the node's name in its agent. */
let machineNode = "local";

/** The agent's node name (lib/agent/main.ts), before anything reaches the database server. */
export function setDatabaseServerNode(name: string): void {
  machineNode = name;
}

type MarkKind = "database" | "user";

/** A name that exists on the server and is not the panel's: 422 at `field`, nothing changed. */
const foreignName = (field: string, what: string, name: string) =>
  validationError(field, `${name} exists on the database server as a ${what} the panel did not make; the panel leaves it alone`);

/**
 * A connection pool whose driver, mysql2, is loaded by its first query: most processes that import
 * this module (a command, a test file) never talk to MariaDB, and loading it costs a tenth of a second.
 */
function poolOnFirstQuery(options: PoolOptions): { query: Pool["query"]; end(): Promise<void> } {
  let pool: Promise<Pool> | null = null;
  const opened = () => (pool ??= import("mysql2/promise").then(({ default: mysql }) => mysql.createPool(options)));
  return {
    query: (async (...args: Parameters<Pool["query"]>) => (await opened()).query(...args)) as Pool["query"],
    end: async () => {
      if (pool) await (await pool).end();
    },
  };
}

export function createMysqlProvisioner(url: string, userHost: string): MysqlProvisioner {
  const pool = poolOnFirstQuery({ uri: url, connectionLimit: 4, connectTimeout: 5000, multipleStatements: false });
  /** A user as the placeholders `?@?` take it, after checking the name. */
  const userValues = (username: string) => (identifier(username), [username, userHost]);
  async function query(operation: string, statement: string, values: unknown[] = []) {
    try {
      return (await pool.query(statement, values))[0];
    } catch (error) {
      throw serverError(operation, error);
    }
  }
  async function run(operation: string, statement: string, values: unknown[] = []) {
    await claim();
    await query(operation, statement, values);
  }
  let claimed: Promise<void> | null = null;
  async function claimOnce(): Promise<void> {
    const operation = "prepare the panel's schema on the database server";
    await query(operation, `CREATE DATABASE IF NOT EXISTS ${PANEL_SCHEMA}`);
    await query(operation, `CREATE TABLE IF NOT EXISTS ${PANEL_SCHEMA}.marks (kind VARCHAR(16) NOT NULL, name VARCHAR(80) NOT NULL, PRIMARY KEY (kind, name))`);
    await query(operation, `CREATE TABLE IF NOT EXISTS ${PANEL_SCHEMA}.server (id TINYINT NOT NULL PRIMARY KEY, node VARCHAR(64) NOT NULL, claimed_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)`);
    await query(operation, `INSERT IGNORE INTO ${PANEL_SCHEMA}.server (id, node) VALUES (1, ?)`, [machineNode]);
    const rows = (await query(operation, `SELECT node FROM ${PANEL_SCHEMA}.server WHERE id = 1`)) as { node: string }[];
    const owner = rows[0]?.node;
    if (owner !== machineNode) {
      throw new AppError(
        "CONFLICT",
        `The MariaDB server of ${machineNode === "local" ? "the panel's" : `the node ${machineNode}'s`} MYSQL_PROVISION_URL already serves the node ${owner}: each node needs a MariaDB server of its own (docs/nodes.md); nothing was changed`,
      );
    }
  }
  function claim(): Promise<void> {
    claimed ??= claimOnce().catch((error) => {
      claimed = null;
      throw error;
    });
    return claimed;
  }
  async function isMarked(kind: MarkKind, name: string): Promise<boolean> {
    await claim();
    const rows = (await query(`read the panel's marks`, `SELECT 1 AS found FROM ${PANEL_SCHEMA}.marks WHERE kind = ? AND name = ?`, [kind, name])) as unknown[];
    return rows.length > 0;
  }
  /** Marks the name; whether the mark is new (false: the panel had made it already). */
  async function mark(kind: MarkKind, name: string): Promise<boolean> {
    await claim();
    const result = (await query(`mark ${name}`, `INSERT IGNORE INTO ${PANEL_SCHEMA}.marks (kind, name) VALUES (?, ?)`, [kind, name])) as { affectedRows: number };
    return result.affectedRows === 1;
  }
  const unmark = (kind: MarkKind, name: string) => query(`unmark ${name}`, `DELETE FROM ${PANEL_SCHEMA}.marks WHERE kind = ? AND name = ?`, [kind, name]);
  /**
   * CREATE (no IF NOT EXISTS: it fails when the name exists) under a mark written first, so a
   * crash between the two leaves a mark without a name, never a name without its mark. A name
   * that existed unmarked loses the new mark again and is refused as another's.
   */
  async function createMarked(kind: MarkKind, name: string, create: () => Promise<unknown>, existsCode: string, refusal: () => AppError) {
    const fresh = await mark(kind, name);
    try {
      await create();
    } catch (error) {
      if (fresh) await unmark(kind, name);
      if (fresh && (error as { code?: string }).code === existsCode) throw refusal();
      throw error;
    }
  }
  /** Whether a drop or alter may touch the name: the panel's own. Another's is left as it is (logged). */
  async function ours(kind: MarkKind, name: string): Promise<boolean> {
    if (await isMarked(kind, name)) return true;
    console.error(`[mysql] ${kind} ${name}: not marked as the panel's on this server; left as it is`);
    return false;
  }
  return {
    claim,
    async adopt(databases, users) {
      for (const name of databases) await mark("database", name);
      for (const name of users) await mark("user", name);
    },
    async foreignNames(databases, users) {
      const unmarked = async (kind: MarkKind, names: string[]) => {
        const found: string[] = [];
        for (const name of names) if (!(await isMarked(kind, name))) found.push(name);
        return found;
      };
      const [databaseCandidates, userCandidates] = [await unmarked("database", databases), await unmarked("user", users)];
      const existing = async (statement: string, names: string[], values: unknown[]) => {
        if (names.length === 0) return [];
        // A provisioning user without rights on mysql.user sees no user here: the CREATE refuses them later.
        const rows = (await pool.query(statement, values).then(([result]) => result, () => [])) as { name: string }[];
        const present = new Set(rows.map((row) => row.name));
        return names.filter((name) => present.has(name));
      };
      return {
        databases: await existing("SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN (?)", databaseCandidates, [databaseCandidates]),
        users: await existing("SELECT User AS name FROM mysql.user WHERE User IN (?) AND Host = ?", userCandidates, [userCandidates, userHost]),
      };
    },
    async createDatabase(name) {
      const quoted = databaseName(name);
      await createMarked("database", name, () => pool.query(`CREATE DATABASE ${quoted}`), "ER_DB_CREATE_EXISTS", () => foreignName("database_name", "database", name)).catch(
        (error) => {
          throw error instanceof AppError ? error : serverError(`create database ${name}`, error);
        },
      );
    },
    async dropDatabase(name) {
      const quoted = databaseName(name);
      if (!(await ours("database", name))) return;
      await run(`drop database ${name}`, `DROP DATABASE IF EXISTS ${quoted}`);
      await unmark("database", name);
    },
    async createUser(username, password, { locked }) {
      const values = [...userValues(username), password];
      await createMarked(
        "user",
        username,
        () => pool.query(`CREATE USER ?@? IDENTIFIED BY ? ACCOUNT ${locked ? "LOCK" : "UNLOCK"}`, values),
        "ER_CANNOT_USER",
        () => foreignName("username", "user", username),
      ).catch((error) => {
        throw error instanceof AppError ? error : serverError(`create database user ${username}`, error);
      });
    },
    async dropUser(username) {
      const values = userValues(username);
      if (!(await ours("user", username))) return;
      await run(`drop database user ${username}`, "DROP USER IF EXISTS ?@?", values);
      await unmark("user", username);
    },
    async setUserLocked(username, locked) {
      const values = userValues(username);
      if (!(await ours("user", username))) return;
      await run(`${locked ? "lock" : "unlock"} database user ${username}`, `ALTER USER IF EXISTS ?@? ACCOUNT ${locked ? "LOCK" : "UNLOCK"}`, values);
    },
    async passwordHash(username) {
      if (!(await ours("user", username))) return null;
      try {
        const [rows] = await pool.query("SELECT authentication_string AS hash FROM mysql.user WHERE User = ? AND Host = ?", userValues(username));
        const hash = (rows as { hash: string | null }[])[0]?.hash ?? null;
        return hash && NATIVE_PASSWORD_HASH.test(hash) ? hash : null;
      } catch (error) {
        throw serverError(`read the password of ${username}`, error);
      }
    },
    async setPasswordHash(username, hash) {
      if (!NATIVE_PASSWORD_HASH.test(hash)) throw new AppError("VALIDATION", `The password of ${username} in the backup is not a MariaDB password hash`);
      if (!(await isMarked("user", username))) throw foreignName("username", "user", username);
      return run(`set the password of ${username}`, "ALTER USER ?@? IDENTIFIED BY PASSWORD ?", [...userValues(username), hash]);
    },
    async grant(username, database, privileges) {
      const list = privilegeList(privileges);
      grantTarget(database);
      // Rights only for the panel's users, only on the panel's databases.
      if (!(await isMarked("user", username))) throw foreignName("username", "user", username);
      if (!(await isMarked("database", database))) throw foreignName("database_name", "database", database);
      await this.revoke(username, database);
      await run(`grant privileges on ${database} to ${username}`, `GRANT ${list} ON ${grantTarget(database)} TO ?@?`, userValues(username));
    },
    async revoke(username, database) {
      const target = grantTarget(database);
      if (!(await ours("user", username))) return;
      try {
        await pool.query(`REVOKE ALL PRIVILEGES ON ${target} FROM ?@?`, userValues(username));
      } catch (error) {
        if ((error as { code?: string }).code === "ER_NONEXISTING_GRANT") return; // nothing to revoke
        throw serverError(`revoke privileges on ${database} from ${username}`, error);
      }
    },
    async databaseSizesMb(names) {
      if (names.length === 0) return new Map();
      try {
        const [rows] = await pool.query(
          `SELECT s.schema_name AS name, COALESCE(SUM(t.data_length + t.index_length), 0) / 1048576 AS size_mb
             FROM information_schema.schemata s LEFT JOIN information_schema.tables t ON t.table_schema = s.schema_name
            WHERE s.schema_name IN (?) GROUP BY s.schema_name`,
          [names],
        );
        return new Map((rows as { name: string; size_mb: string }[]).map((row) => [row.name, Number(row.size_mb)]));
      } catch (error) {
        throw serverError("read database sizes", error);
      }
    },
    async databaseObjects(database) {
      databaseName(database);
      try {
        const [rows] = await pool.query(
          `SELECT ROUTINE_TYPE AS type, ROUTINE_NAME AS name, DEFINER AS definer FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?
           UNION ALL SELECT 'VIEW', TABLE_NAME, DEFINER FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ?
           UNION ALL SELECT 'TRIGGER', TRIGGER_NAME, DEFINER FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?
           UNION ALL SELECT 'EVENT', EVENT_NAME, DEFINER FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ?`,
          [database, database, database, database],
        );
        return rows as DatabaseObject[];
      } catch (error) {
        throw serverError(`list the routines, views, triggers and events of ${database}`, error);
      }
    },
    close: () => pool.end(),
  };
}

const globalForMysql = globalThis as unknown as { __panelMysql?: MysqlProvisioner | null };

/** The configured provisioner, or null when MYSQL_PROVISION_URL is unset (records only). */
export function mysqlProvisioner(): MysqlProvisioner | null {
  if (globalForMysql.__panelMysql !== undefined) return globalForMysql.__panelMysql;
  const { mysqlProvisionUrl, mysqlUserHost } = env();
  return (globalForMysql.__panelMysql = mysqlProvisionUrl ? createMysqlProvisioner(mysqlProvisionUrl, mysqlUserHost) : null);
}

// ---- The same server, asked by name: what a node's agent runs for the panel (lib/nodes/hosts.ts) ----

/** The calls of MysqlProvisioner the panel makes on an account's node. */
export const DATABASE_SERVER_CALLS = ["createDatabase", "dropDatabase", "createUser", "dropUser", "setUserLocked", "setPasswordHash", "grant", "revoke", "databaseSizesMb"] as const;
export type DatabaseServerCall = (typeof DATABASE_SERVER_CALLS)[number];

/**
 * One call of this machine's database server; `{configured: false}` without MYSQL_PROVISION_URL
 * (the records are then all there is, as on a panel without it). Sizes come back as pairs.
 */
export async function callDatabaseServer(input: { call: DatabaseServerCall; args: unknown[] }): Promise<{ configured: boolean; value?: unknown }> {
  const server = mysqlProvisioner();
  if (!server) return { configured: false };
  if (!(DATABASE_SERVER_CALLS as readonly string[]).includes(input.call)) throw new Error(`not a database server call: ${JSON.stringify(input.call)}`);
  const value: unknown = await (server[input.call] as (...args: unknown[]) => Promise<unknown>)(...input.args);
  return { configured: true, value: value instanceof Map ? [...value] : value };
}

/** Marks the databases and users the panel's records name on this machine (once: ./marks.ts adoptLegacyUsers); nothing without MYSQL_PROVISION_URL. */
export async function adoptDatabaseNames(databases: string[], users: string[]): Promise<void> {
  const server = mysqlProvisioner();
  if (!server) return;
  await server.adopt(databases, users);
  if (databases.length || users.length) console.log(`[mysql] ${databases.length} database(s) and ${users.length} user(s) of the panel's records marked as the panel's`);
}

/** Termination: the account's database users, then its databases, go from this machine's server. */
export async function removeAccountDatabases(input: { databases: string[]; users: string[] }): Promise<void> {
  const server = mysqlProvisioner();
  if (!server) return;
  for (const user of input.users) await server.dropUser(user);
  for (const database of input.databases) await server.dropDatabase(database);
}

/** Suspension: ACCOUNT LOCK refuses new logins; an unlocked user can log in again with its old password. */
export async function setDatabaseUsersLocked(input: { users: string[]; locked: boolean }): Promise<void> {
  const server = mysqlProvisioner();
  if (!server) return;
  for (const user of input.users) await server.setUserLocked(user, input.locked);
}

// ---- Dumps and their loads (docs/backups.md "Restore"; issue 29) ----
//
// A dump is mariadb-dump of one database WITHOUT --databases, so it holds no CREATE DATABASE or
// USE line: it loads into whichever database the load names. Its text is never read or changed
// by the panel (a filter cannot know what the dump quotes). A load runs the `mariadb` client
// with --binary-mode (no client commands: no \g, \!, source, tee) and --local-infile=0, as a
// MariaDB user made for that load alone with ALL PRIVILEGES on the target database and nothing
// else (no SET USER, no SUPER, no GRANT OPTION), dropped afterwards whatever happened. Whatever
// the client makes of the text, the server lets it touch that database only: a routine, view,
// trigger or event whose DEFINER is anyone but the loader, or one reading another database, is
// refused by the server (the statements are counted, the load goes on: --force). Dumps made
// before (with --databases) load the same way: their CREATE DATABASE and USE of their own name
// are refused when they load into another name, and everything after lands in the target.

/** How long one dump or load may take. */
const DUMP_TIMEOUT_MS = 6 * 60 * 60_000;

/** mariadb-dump of `database` (one consistent transaction, routines, triggers, events), its output a stream. */
export async function startDatabaseDump(database: string): Promise<{ stdout: Readable; done: Promise<void> }> {
  databaseName(database);
  const connection = await mariadbClientOptions();
  if (!connection) throw new AppError("VALIDATION", "MYSQL_PROVISION_URL is not set");
  databaseName(database);
  const dump = startChild("mariadb-dump", [connection, "--single-transaction", "--routines", "--triggers", "--events", "--", database], {
    env: toolEnv(),
    timeoutMs: DUMP_TIMEOUT_MS,
  });
  const done = childExit(dump).then(
    (exit) => {
      if (exit.code === 0) return;
      console.error(`[backups] mariadb-dump of ${database} failed: ${exitReason(exit)}`);
      throw new AppError("VALIDATION", `mariadb-dump of ${database} failed (the panel's log says why)`);
    },
    (error: Error) => {
      console.error(`[backups] mariadb-dump could not run: ${error.message}`);
      throw new AppError("VALIDATION", "mariadb-dump could not run (Debian package mariadb-client)");
    },
  );
  return { stdout: dump.stdout!, done };
}

/**
 * Server errors a load counts as refusals and goes on after: access denied to another database
 * (1044), table or column (1142, 1143) or routine (1370), and 1227, the DEFINER of an object
 * that is not the loader (it would need SET USER). Any other error fails the load.
 */
const REFUSALS = new Set([1044, 1142, 1143, 1227, 1370]);

/** What a load did: the statements the server refused (their objects are not there). */
export interface DumpLoad {
  refused: number;
}

/**
 * Loads `dump` into `database` as a MariaDB user made for this load (see above); stopped when
 * `signal` aborts. Fails on any error but a refusal (the client's words to the log, a short
 * message to the caller); the loader is dropped in every case.
 */
export async function loadDatabaseDump(database: string, dump: Readable, signal?: AbortSignal): Promise<DumpLoad> {
  databaseName(database);
  const server = mysqlProvisioner();
  const url = env().mysqlProvisionUrl;
  if (!server || !url) throw new AppError("VALIDATION", "MYSQL_PROVISION_URL is not set");
  const loader = `panel_load_${randomBytes(8).toString("hex")}`;
  const password = randomBytes(24).toString("base64url");
  const parsed = new URL(url);
  const optionsPath = path.join(env().dataDir, `mariadb-${loader}.cnf`);
  await server.createUser(loader, password, { locked: false });
  try {
    await server.grant(loader, database, ["ALL PRIVILEGES"]);
    // O_EXCL and 0600: a new file only the panel reads, removed with the loader.
    await fs.writeFile(optionsPath, optionFile(`a dump's loader for ${database}`, parsed, loader, password), { flag: "wx", mode: 0o600 });
    return await runLoad(optionsPath, database, dump, signal);
  } finally {
    await fs.rm(optionsPath, { force: true });
    await server.dropUser(loader).catch((error: Error) => console.error(`[backups] could not drop the loader ${loader}: ${error.message}`));
  }
}

async function runLoad(optionsPath: string, database: string, dump: Readable, signal?: AbortSignal): Promise<DumpLoad> {
  // --defaults-file first: this file only, none of the machine's option files (a [client] group there could turn local-infile on).
  const load = startChild("mariadb", [`--defaults-file=${optionsPath}`, "--binary-mode", "--force", "--local-infile=0", "--", database], {
    env: toolEnv(),
    stdio: ["pipe", "ignore", "pipe"],
    timeoutMs: DUMP_TIMEOUT_MS,
  });
  stopOnAbort(load, signal);
  // With --force the client reports each error on a line of its own, and echoes the statement
  // (the dump's text: never kept); only the error lines are read.
  const errors: { code: number | null; line: string }[] = [];
  let partial = "";
  load.stderr!.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString("utf8")).split("\n");
    partial = lines.pop()!;
    for (const line of lines) {
      const error = /^ERROR (?:(\d+) \(\w+\) )?at line \d+/.exec(line);
      if (error) errors.push({ code: error[1] ? Number(error[1]) : null, line: line.slice(0, 300) });
    }
  });
  const exited = childExit(load, 500);
  (load.stdin as Writable).on("error", () => undefined); // the client gone: its exit says why
  dump.pipe(load.stdin!);
  const exit = await exited.catch((error: Error) => {
    console.error(`[backups] mariadb could not run: ${error.message}`);
    throw new AppError("VALIDATION", "mariadb could not run (Debian package mariadb-client)");
  });
  const failures = errors.filter((error) => error.code === null || !REFUSALS.has(error.code));
  if (exit.code !== 0 || failures.length) {
    console.error(`[backups] the load into ${database} failed (${exit.signal ?? `exit ${exit.code}`}): ${failures.slice(0, 5).map((error) => error.line).join(" | ")}`);
    throw new AppError("VALIDATION", `The dump did not load into ${database} (the panel's log says why)`);
  }
  const refused = errors.length;
  if (refused) console.error(`[backups] the load into ${database}: ${refused} statement(s) refused: ${errors.slice(0, 5).map((error) => error.line).join(" | ")}`);
  return { refused };
}
