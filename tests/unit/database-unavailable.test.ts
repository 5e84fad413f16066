import assert from "node:assert/strict";
import net from "node:net";
import { test } from "node:test";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { AppError } from "@/lib/errors";
import { toErrorResponse } from "@/lib/http/respond";
import { freePort } from "../support/server";

// A database that cannot be reached is a 503 with Retry-After; the same socket error from any
// other service (MariaDB, an ACME directory, a child's pipe) is not the database's and must not
// be answered as if it were. Real errors, from real refused connections.

async function refusedByPostgresDriver(port: number): Promise<unknown> {
  const client = postgres(`postgres://nobody@127.0.0.1:${port}/none`, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    await drizzle(client).execute(sql`select 1`);
  } catch (error) {
    return error;
  } finally {
    await client.end({ timeout: 1 });
  }
  throw new Error("a query to a closed port succeeded");
}

async function refusedBySocket(port: number): Promise<NodeJS.ErrnoException> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => reject(new Error("a closed port accepted a connection")));
    socket.once("error", resolve);
  });
}

test("a refused database connection is a 503 with Retry-After, also wrapped in an AppError", async () => {
  const error = await refusedByPostgresDriver(await freePort());
  for (const thrown of [error, new AppError("INTERNAL", "Could not read metrics", undefined, { cause: error })]) {
    const response = toErrorResponse(thrown, "Reading");
    assert.equal(response.status, 503);
    assert.match(response.headers.get("retry-after") ?? "", /^\d+$/);
    assert.deepEqual(await response.json(), { error: "The database is unavailable; try again shortly" });
  }
});

test("the same refusal from another service is not the database's", async () => {
  const error = await refusedBySocket(await freePort());
  assert.equal(error.code, "ECONNREFUSED");
  const wrapped = toErrorResponse(new AppError("INTERNAL", "Could not read the system's services", undefined, { cause: error }), "Reading");
  assert.equal(wrapped.status, 500);
  assert.deepEqual(await wrapped.json(), { error: "Could not read the system's services" });
  const unwrapped = toErrorResponse(error, "Reading");
  assert.equal(unwrapped.status, 500);
  assert.equal(unwrapped.headers.get("retry-after"), null);
});
