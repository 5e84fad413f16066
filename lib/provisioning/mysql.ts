import path from "node:path";
import mysql from "mysql2/promise";
import { PRIVILEGES } from "@/lib/databases/schemas";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { readIfExists, writeAtomically } from "./system";

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
  const contents = [
    "# Written by the hosting panel from MYSQL_PROVISION_URL: the MariaDB clients' connection.",
    "[client]",
    `host=${optionValue("host", parsed.hostname)}`,
    `port=${optionValue("port", parsed.port || "3306")}`,
    `user=${optionValue("user", decodeURIComponent(parsed.username))}`,
    `password=${optionValue("password", decodeURIComponent(parsed.password))}`,
    "",
  ].join("\n");
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
 * A database as GRANT and REVOKE name it. There `_` and `%` are wildcards: unescaped, a grant on
 * `a_b` would also open `axb` of another account. Names hold no `%` (IDENTIFIER), so `_` is escaped.
 */
const grantTarget = (name: string) => `${identifier(name).replaceAll("_", "\\_")}.*`;

function privilegeList(privileges: string[]): string {
  if (privileges.length === 0 || !privileges.every((privilege) => allowedPrivileges.has(privilege))) {
    throw new AppError("VALIDATION", "Invalid privileges");
  }
  return privileges.join(", ");
}

/** mysql_native_password's hash: `*` and 40 hex digits (what IDENTIFIED BY PASSWORD takes). */
const NATIVE_PASSWORD_HASH = /^\*[0-9A-F]{40}$/;

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
    createDatabase: (name) => run(`create database ${name}`, `CREATE DATABASE ${identifier(name)}`),
    dropDatabase: (name) => run(`drop database ${name}`, `DROP DATABASE IF EXISTS ${identifier(name)}`),
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
      try {
        await pool.query(`REVOKE ALL PRIVILEGES ON ${grantTarget(database)} FROM ?@?`, userValues(username));
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
