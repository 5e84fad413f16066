import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import mysql from "mysql2/promise";
import { PRIVILEGES } from "./rules";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
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
 * The server's own databases: never a customer's, whatever a record or a node's answer says —
 * refused by name wherever a database is made, dropped, granted, dumped or loaded (rights on
 * `mysql` are rights on every user of the server).
 */
export const SYSTEM_DATABASES: readonly string[] = ["mysql", "information_schema", "performance_schema", "sys"];

/** A customer database's name, back-quoted: an identifier, and not one of SYSTEM_DATABASES (case-insensitive, as the server on some file systems). */
export function databaseName(name: string): string {
  const quoted = identifier(name);
  if (SYSTEM_DATABASES.includes(name.toLowerCase())) throw new AppError("VALIDATION", `"${name}" is a database of the server itself, never a customer's`);
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

export function createMysqlProvisioner(url: string, userHost: string): MysqlProvisioner {
  const pool = mysql.createPool({ uri: url, connectionLimit: 4, connectTimeout: 5000, multipleStatements: false });
  /** A user as the placeholders `?@?` take it, after checking the name. */
  const userValues = (username: string) => (identifier(username), [username, userHost]);
  async function run(operation: string, statement: string, values: unknown[] = []) {
    try {
      await pool.query(statement, values);
    } catch (error) {
      throw serverError(operation, error);
    }
  }
  return {
    createDatabase: (name) => run(`create database ${name}`, `CREATE DATABASE ${databaseName(name)}`),
    dropDatabase: (name) => run(`drop database ${name}`, `DROP DATABASE IF EXISTS ${databaseName(name)}`),
    createUser: (username, password, { locked }) =>
      run(
        `create database user ${username}`,
        `CREATE USER ?@? IDENTIFIED BY ? ACCOUNT ${locked ? "LOCK" : "UNLOCK"}`,
        [...userValues(username), password],
      ),
    dropUser: (username) => run(`drop database user ${username}`, "DROP USER IF EXISTS ?@?", userValues(username)),
    setUserLocked: (username, locked) =>
      run(
        `${locked ? "lock" : "unlock"} database user ${username}`,
        `ALTER USER IF EXISTS ?@? ACCOUNT ${locked ? "LOCK" : "UNLOCK"}`,
        userValues(username),
      ),
    async passwordHash(username) {
      try {
        const [rows] = await pool.query("SELECT authentication_string AS hash FROM mysql.user WHERE User = ? AND Host = ?", userValues(username));
        const hash = (rows as { hash: string | null }[])[0]?.hash ?? null;
        return hash && NATIVE_PASSWORD_HASH.test(hash) ? hash : null;
      } catch (error) {
        throw serverError(`read the password of ${username}`, error);
      }
    },
    setPasswordHash(username, hash) {
      if (!NATIVE_PASSWORD_HASH.test(hash)) throw new AppError("VALIDATION", `The password of ${username} in the backup is not a MariaDB password hash`);
      return run(`set the password of ${username}`, "ALTER USER ?@? IDENTIFIED BY PASSWORD ?", [...userValues(username), hash]);
    },
    async grant(username, database, privileges) {
      const list = privilegeList(privileges);
      await this.revoke(username, database);
      await run(`grant privileges on ${database} to ${username}`, `GRANT ${list} ON ${grantTarget(database)} TO ?@?`, userValues(username));
    },
    async revoke(username, database) {
      const target = grantTarget(database);
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
