import fs from "node:fs";
import path from "node:path";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { closeTree } from "@/lib/data-dir";
import { env } from "@/lib/env";
import { PreparingPGlite } from "./pglite";
import * as schema from "./schema";

export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;
export type Transaction = Parameters<Parameters<Database["transaction"]>[0]>[0];
/** A database handle or an open transaction: services accept either. */
export type Queryable = Database | Transaction;

export type DatabaseTarget = { url: string } | { dataDir: string };

/** One open connection (pool or embedded database). */
export interface Connection {
  db: Database;
  kind: "postgres" | "pglite";
  /**
   * auth_generation's value (the request hot path): on PostgreSQL read with the driver's leanest
   * prepared query, on PGlite followed in memory (see followAuthGeneration).
   */
  readAuthGeneration(): Promise<number | null>;
  migrate(): Promise<void>;
  close(): Promise<void>;
}

const migrationsFolder = path.join(/* turbopackIgnore: true */ process.cwd(), "db", "migrations");

export class DataDirLockedError extends Error {}

/** The command line of a live process, or null (no such process, or no /proc to ask). */
function commandLineOf(pid: number): string | null {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return null;
  }
}

/**
 * PGlite has no lock between processes: two on one directory silently lose writes. The owner
 * writes its pid and command line into `<dataDir>/panel.lock`. The lock holds only while that pid
 * runs that same command line: a pid reused by another program after a crash, or a file written
 * by hand (`echo 1 > panel.lock`), is stale and taken over. Without /proc, a live pid holds it.
 */
function lockDataDir(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lockPath = path.join(dataDir, "panel.lock");
  const ownCommandLine = commandLineOf(process.pid) ?? "";
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockPath, `${process.pid}\n${ownCommandLine}\n`, { flag: "wx", mode: 0o600 });
      return () => fs.rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const [pidLine, commandLine = ""] = fs.readFileSync(lockPath, "utf8").split("\n");
      const ownerPid = Number(pidLine);
      if (ownerPid && ownerPid !== process.pid && isLockOwner(ownerPid, commandLine.trim())) {
        throw new DataDirLockedError(
          `The data dir ${dataDir} is in use by another panel process (pid ${ownerPid}), ` +
            `probably the running server. Stop it first, or use PostgreSQL (DATABASE_URL) ` +
            `to run the command line beside the server.`,
        );
      }
      fs.rmSync(lockPath, { force: true });
    }
  }
  throw new DataDirLockedError(`Could not lock the data dir ${dataDir}`);
}

function isLockOwner(pid: number, recordedCommandLine: string): boolean {
  if (!isProcessAlive(pid)) return false;
  const commandLine = commandLineOf(pid);
  return commandLine === null || (recordedCommandLine !== "" && commandLine === recordedCommandLine);
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * `use`: "server" for a process's one connection kept for its life (connection()); "brief" for a
 * connection kept for seconds — a command of the command line, a test's own — which on PGlite
 * needs far fewer shared buffers (db/pglite.ts PreparingPGlite.open).
 */
export async function openConnection(target: DatabaseTarget, use: "server" | "brief"): Promise<Connection> {
  if ("url" in target) {
    const client = postgres(target.url, {
      max: 10,
      onnotice: () => {},
      // While the database is away a request must fail within seconds (503, lib/http/respond.ts)
      // and be served again within seconds once it is back. A stopped or restarting server refuses
      // at once; a connect that gets no answer gives up after 10 s. Not less: the timer runs on
      // the panel's own event loop, so on a busy machine a connect that PostgreSQL answered in
      // time was given up after 2 s when the loop came round late (CI, stop 42). The pause before
      // reconnecting stays under 1 s (the default grows to 20 s).
      connect_timeout: 10,
      backoff: (attempt) => Math.min(0.1 * attempt, 1),
    });
    const db = drizzlePostgres(client, { schema }) as unknown as Database;
    return {
      db,
      kind: "postgres",
      async readAuthGeneration() {
        const [row] = await client`select value from auth_generation where id = 1`;
        return row ? Number(row.value) : null;
      },
      migrate: () => migratePostgres(db as never, { migrationsFolder }),
      close: () => client.end({ timeout: 5 }),
    };
  }
  const unlock = lockDataDir(target.dataDir);
  let followingAuthGeneration: Promise<() => number | null> | undefined;
  try {
    const clusterDir = path.join(target.dataDir, "pglite");
    const client = await PreparingPGlite.open(clusterDir, { brief: use === "brief" });
    // A new cluster's files are written 0666, whatever the umask (and a WAL segment keeps its mode
    // when it is recycled): closed once it is open (docs/security.md "The panel's data is the
    // panel's").
    closeTree(clusterDir);
    const db = drizzlePglite(client, { schema }) as unknown as Database;
    return {
      db,
      kind: "pglite",
      async readAuthGeneration() {
        followingAuthGeneration ??= followAuthGeneration(client).catch((error) => {
          followingAuthGeneration = undefined;
          throw error;
        });
        return (await followingAuthGeneration)();
      },
      async migrate() {
        await migratePglite(db as never, { migrationsFolder });
        await client.forgetPreparedStatements();
      },
      async close() {
        await client.close();
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}

/**
 * auth_generation on PGlite without a call into the backend per request. The server is the only
 * process on the database (the lock above), so every change commits through this instance, and
 * the notification of each bump (db/migrations/0009) is handled before the committing call
 * returns. Listen first, then read once: a bump committed before the read is in the value read,
 * any later one arrives as a notification.
 */
async function followAuthGeneration(client: PreparingPGlite): Promise<() => number | null> {
  let value: number | null = null;
  const unlisten = await client.listen("panel_auth_generation", (payload) => {
    value = Number(payload);
  });
  try {
    const { rows } = await client.query<{ value: number }>("select value from auth_generation where id = 1");
    value = rows[0] ? Number(rows[0].value) : null;
  } catch (error) {
    await unlisten();
    throw error;
  }
  return () => value;
}

/** The target has no panel database (nothing there, or no panel tables in it). */
export class NoPanelDatabaseError extends Error {
  constructor(readonly where: string) {
    super(`No panel database at ${where}`);
  }
}

/** Where a target points, for messages: the data dir, or the URL without its password. */
export function describeTarget(target: DatabaseTarget): string {
  if ("dataDir" in target) return target.dataDir;
  try {
    const url = new URL(target.url);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return "DATABASE_URL";
  }
}

/** PGlite writes PG_VERSION when it initialises a cluster, so a data dir without one holds none. */
const hasPgliteCluster = (dataDir: string) => fs.existsSync(path.join(dataDir, "pglite", "PG_VERSION"));

/**
 * Opens the panel database only if it is there. Only the server creates one (an empty PGlite
 * dir on first start, the tables in an empty PostgreSQL database); every other process (the
 * command line) would otherwise make a second, empty panel out of a wrong or missing setting.
 * Nothing is created here: not the data dir, not a table. A panel database with pending
 * migrations is still opened (the caller may apply them). A brief connection: a command's.
 */
export async function openExistingConnection(target: DatabaseTarget): Promise<Connection> {
  if ("dataDir" in target && !hasPgliteCluster(target.dataDir)) throw new NoPanelDatabaseError(describeTarget(target));
  const opened = await openConnection(target, "brief");
  try {
    const rows = await opened.db.execute(sql`
      SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AND to_regclass('public.plans') IS NOT NULL AS present`);
    const [row] = (Array.isArray(rows) ? rows : (rows as unknown as { rows: { present: boolean }[] }).rows) as { present: boolean }[];
    if (!row?.present) throw new NoPanelDatabaseError(describeTarget(target));
    return opened;
  } catch (error) {
    await opened.close();
    // PostgreSQL: the database named in the URL does not exist (drizzle wraps the driver's error).
    const code = (error as { cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
    if (code === "3D000") throw new NoPanelDatabaseError(describeTarget(target));
    throw error;
  }
}

export function configuredTarget(): DatabaseTarget {
  const { databaseUrl, dataDir } = env();
  return databaseUrl ? { url: databaseUrl } : { dataDir };
}

const globalForDb = globalThis as unknown as { __panelConnection?: Promise<Connection> };

/**
 * The process's one connection, opened on first use. Kept on globalThis: Next.js loads route
 * handlers, instrumentation and the custom server as separate module instances, and a second
 * PGlite on the same directory would lose data.
 */
export function connection(): Promise<Connection> {
  return (globalForDb.__panelConnection ??= openConnection(configuredTarget(), "server"));
}

export async function getDb(): Promise<Database> {
  return (await connection()).db;
}
