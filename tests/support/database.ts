import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { type Connection, type DatabaseTarget, openConnection } from "@/db/client";
import { prepareDatabase } from "@/db/prepare";

// Test storage: a fresh PostgreSQL database per test environment on the machine's server, or a
// copy of a migrated PGlite template directory (a fresh PGlite takes ~4 s to initialise).

export type Backend = "pglite" | "postgres";

// Seeding runs lib/ services in the test process, and some write files (zone files): keep them
// out of the project's ./data. Servers get their own DATA_DIR (and so ZONES_DIR) per environment.
process.env.ZONES_DIR ??= path.join(os.tmpdir(), "panel-test-seed-zones");

/** TEST_BACKENDS=pglite,postgres (default both). */
export function testBackends(): Backend[] {
  const value = process.env.TEST_BACKENDS ?? "pglite,postgres";
  return value.split(",").map((name) => name.trim()).filter(Boolean) as Backend[];
}

/**
 * The backends of a suite whose subject is the machine (nginx, PHP-FPM, OpenSSH, restic, MariaDB,
 * test nodes…) rather than the panel's storage: `backend` alone when TEST_BACKENDS has it (else
 * TEST_BACKENDS' first), every one of them with TEST_EVERY_BACKEND=1. The storage calls such
 * suites make behave the same on both (tests/api/storage-parity.test.ts); docs/testing.md says
 * which file runs where and why.
 */
export function machineBackends(backend: Backend): Backend[] {
  const backends = testBackends();
  if (process.env.TEST_EVERY_BACKEND === "1") return backends;
  return backends.includes(backend) ? [backend] : backends.slice(0, 1);
}

const adminUrl = () => process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  backend: Backend;
  target: DatabaseTarget;
  /** Environment for a server or CLI process on this database. */
  env: Record<string, string>;
  /** Opens, prepares (migrations) and returns a connection; close it before starting a PGlite server. */
  open(): Promise<Connection>;
  drop(): Promise<void>;
}

/** A server's or CLI's environment on `dataDir`: zone files under it, not the test process's. */
const dataDirEnv = (dataDir: string, extra: Record<string, string> = {}) => ({
  ...extra,
  DATA_DIR: dataDir,
  ZONES_DIR: path.join(dataDir, "zones"),
});

const tmpRoot = path.join(process.cwd(), ".tmp");

async function pgliteTemplate(): Promise<string> {
  const migrations = fs.readdirSync(path.join(process.cwd(), "db", "migrations")).sort().join(",");
  const stamp = Buffer.from(migrations).toString("base64url").slice(-24);
  const dir = path.join(tmpRoot, `pglite-template-${stamp}`);
  if (fs.existsSync(path.join(dir, "ready"))) return dir;
  // Test files run side by side and may all find it missing: each builds one of its own and
  // renames it into place, and the first rename wins (a later one finds the folder taken).
  fs.mkdirSync(tmpRoot, { recursive: true });
  const building = fs.mkdtempSync(`${dir}.building-`);
  try {
    const connection = await openConnection({ dataDir: building }, "brief");
    await prepareDatabase(connection);
    await connection.close();
    fs.rmSync(path.join(building, "panel.lock"), { force: true });
    fs.writeFileSync(path.join(building, "ready"), "");
    if (fs.existsSync(dir) && !fs.existsSync(path.join(dir, "ready"))) fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(building, dir);
  } catch (error) {
    if (!fs.existsSync(path.join(dir, "ready"))) throw error;
  } finally {
    fs.rmSync(building, { recursive: true, force: true });
  }
  return dir;
}

/**
 * A test database as the server's first start leaves it (migrated, the default plan), for
 * processes that only open an existing panel database: the command line.
 */
export async function createPreparedTestDatabase(backend: Backend): Promise<TestDatabase> {
  const database = await createTestDatabase(backend);
  await (await database.open()).close();
  return database;
}

/** A fresh one: on PostgreSQL an empty database (the server migrates it), on PGlite a copy of the migrated template. */
export async function createTestDatabase(backend: Backend): Promise<TestDatabase> {
  if (backend === "postgres") {
    const name = `panel_test_${process.pid}_${randomBytes(4).toString("hex")}`;
    const admin = postgres(adminUrl(), { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(adminUrl());
    url.pathname = `/${name}`;
    const target = { url: url.toString() };
    // The server's own DATA_DIR beside the database (its certificates, mail states, restic cache…).
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-data-"));
    return {
      backend,
      target,
      env: dataDirEnv(dataDir, { DATABASE_URL: target.url }),
      async open() {
        const connection = await openConnection(target, "brief");
        await prepareDatabase(connection);
        return connection;
      },
      async drop() {
        const dropper = postgres(adminUrl(), { max: 1, onnotice: () => {} });
        await dropper.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await dropper.end();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const template = await pgliteTemplate();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-pglite-"));
  fs.cpSync(template, dataDir, { recursive: true });
  fs.rmSync(path.join(dataDir, "panel.lock"), { force: true });
  const target = { dataDir };
  return {
    backend,
    target,
    env: dataDirEnv(dataDir),
    async open() {
      const connection = await openConnection(target, "brief");
      await prepareDatabase(connection);
      return connection;
    },
    async drop() {
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
