import type { Connection, Database } from "@/db/client";
import { type Backend, createTestDatabase, type TestDatabase } from "./database";
import { startServer, type TestServer } from "./server";

// One test environment: a fresh database seeded in-process through lib/ services, then a real
// server on it. With PGlite the seeding connection is closed before the server starts (one
// process per data dir); with PostgreSQL the test keeps it, to change data under a running server.

export interface TestEnvironment<Seed> {
  backend: Backend;
  database: TestDatabase;
  server: TestServer;
  seed: Seed;
  /** PostgreSQL only: a live connection beside the server. */
  db: Database | null;
  teardown(): Promise<void>;
}

export async function createEnvironment<Seed>(
  backend: Backend,
  seed: (db: Database) => Promise<Seed>,
  serverEnv: Record<string, string> = {},
): Promise<TestEnvironment<Seed>> {
  const database = await createTestDatabase(backend);
  let connection: Connection | null = null;
  let server: TestServer;
  let seeded: Seed;
  try {
    connection = await database.open();
    seeded = await seed(connection.db);
    if (backend === "pglite") {
      await connection.close();
      connection = null;
    }
    server = await startServer({ ...database.env, ...serverEnv });
  } catch (error) {
    // Nothing left behind: an open connection would keep the test's process alive until the
    // runner stops it (a failed start then cost 15 minutes, CI stop 42).
    await connection?.close();
    await database.drop();
    throw error;
  }
  return {
    backend,
    database,
    server,
    seed: seeded,
    db: connection?.db ?? null,
    async teardown() {
      await server.stop();
      await connection?.close();
      await database.drop();
    },
  };
}
