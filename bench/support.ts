import fs from "node:fs";
import autocannon from "autocannon";
import type { Connection } from "@/db/client";
import { type Backend, createTestDatabase, type TestDatabase } from "../tests/support/database";

/**
 * Runs `use` on a fresh, migrated database of `backend` and an open connection to it; afterwards
 * the connection is closed and the database dropped, whatever failed. `use` may close the
 * connection early (a PGlite data dir must be free before a server opens it).
 */
export async function withBenchDatabase<T>(
  backend: Backend,
  use: (connection: Connection, database: TestDatabase) => Promise<T>,
): Promise<T> {
  const database = await createTestDatabase(backend);
  let closing: Promise<void> | null = null;
  let opened: Connection | null = null;
  const close = () => (closing ??= opened ? opened.close() : Promise.resolve());
  try {
    opened = await database.open();
    return await use({ ...opened, close }, database);
  } finally {
    await close();
    await database.drop();
  }
}

export interface Measurement {
  label: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  /** Requests answered in the measurement. */
  requests: number;
  /** The server process's CPU (user + system) per request, µs; null when not measured. */
  serverCpuUsPerRequest: number | null;
}

/** CPU time a process has used so far (utime + stime of /proc/PID/stat), µs; null off Linux. */
function processCpuMicros(pid: number): number | null {
  try {
    // Fields after the command name (which is in parentheses and may hold spaces).
    const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    const ticksPerSecond = 100; // USER_HZ, 100 on Linux
    return ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1e6;
  } catch {
    return null;
  }
}

/**
 * autocannon at 32 connections for `seconds` against one URL. With `serverPid`, also the server's
 * CPU per request: unlike req/s, it barely moves when other work shares the machine.
 */
export async function measure(
  label: string,
  url: string,
  headers: Record<string, string> = {},
  seconds = Number(process.env.BENCH_SECONDS ?? 10),
  serverPid?: number,
): Promise<Measurement> {
  const cpuBefore = serverPid ? processCpuMicros(serverPid) : null;
  const result = await autocannon({ url, connections: 32, duration: seconds, headers });
  const cpuAfter = serverPid ? processCpuMicros(serverPid) : null;
  return {
    label,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    requests: result.requests.total,
    serverCpuUsPerRequest:
      cpuBefore !== null && cpuAfter !== null && result.requests.total > 0
        ? (cpuAfter - cpuBefore) / result.requests.total
        : null,
  };
}

/**
 * Load on one route before anything is measured (BENCH_WARMUP_SECONDS, default 10): a fresh
 * server is slow for its first half minute under load. V8 compiles hot JavaScript and, for PGlite,
 * the backend's WebAssembly to optimised code on background threads: measured on PGlite, (c)
 * cost 7.6 ms of CPU a request in its first 5 s, 2.2 ms in the next 5, and 1.5–1.8 ms after
 * 15 s. That compiling is also counted in the server's CPU of whatever runs meanwhile.
 */
export async function warmUp(url: string, headers: Record<string, string> = {}) {
  await measure("warm-up", url, headers, Number(process.env.BENCH_WARMUP_SECONDS ?? 10));
}

export function printTable(rows: Measurement[]) {
  console.log(
    "\n| route | req/s | p50 ms | p99 ms | errors | non-2xx | server CPU µs/request |\n|---|---:|---:|---:|---:|---:|---:|",
  );
  for (const row of rows) {
    const cpu = row.serverCpuUsPerRequest === null ? "–" : row.serverCpuUsPerRequest.toFixed(0);
    console.log(
      `| ${row.label} | ${row.requestsPerSecond.toFixed(0)} | ${row.p50Ms} | ${row.p99Ms} | ${row.errors} | ${row.non2xx} | ${cpu} |`,
    );
  }
}

/**
 * `measured` against a baseline measured just before and just after it (their mean), so that a
 * machine warming up or slowing down during the run favours neither side.
 */
export const ratioToBracket = (measured: Measurement, before: Measurement, after: Measurement) =>
  measured.requestsPerSecond / ((before.requestsPerSecond + after.requestsPerSecond) / 2);

/** Prints whether `value` meets `target`: "≥" (higher is better), "<" or "≤" (lower is better). */
export function verdict(name: string, value: number, target: number, comparison: "≥" | "<" | "≤" = "≥") {
  const ok = comparison === "≥" ? value >= target : comparison === "<" ? value < target : value <= target;
  console.log(`${name}: ${value.toFixed(3)} (target ${comparison} ${target}) ${ok ? "MET" : "NOT MET"}`);
  return ok;
}
