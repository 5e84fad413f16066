import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Database } from "@/db/client";
import { createAccount } from "@/lib/accounts/service";
import { createApiKey } from "@/lib/api-keys/service";
import { insertDomainWithZone } from "@/lib/domains/service";
import { buildIfNeeded } from "../scripts/build-if-needed";
import type { Backend } from "../tests/support/database";
import { startServer, type TestServer } from "../tests/support/server";
import { type CpuProfile, formatSummary, summariseProfile } from "./cpuprofile";
import { type Measurement, measure, printTable, ratioToBracket, verdict, warmUp, withBenchDatabase } from "./support";

// `npm run bench`: the production server, autocannon at 32 connections, 10 s per route
// (BENCH_SECONDS), each route warmed up alike first (10 s each, BENCH_WARMUP_SECONDS: see warmUp).
//   On PostgreSQL (a fresh database on TEST_POSTGRES_URL's server):
//     (a) a bare route returning constant JSON
//     (b) the account-scoped list of GET /api/client/domains without authentication
//         (bench-only route, present only with PANEL_BENCH_ROUTES=1, which only this script sets)
//     (c) GET /api/client/domains through the full API-key check
//   Targets: c/b ≥ 0.9 (authentication nearly free), c/a ≥ 0.65 (one authenticated read costs
//   about a third of a bare route), p99 of (c) ≤ 2 × its p50.
//   On the embedded PGlite (the default storage): (a) and (c) again, c/a ≥ 0.5.
//   Baselines are measured just before and just after the route they price (their mean).
//   Each row also shows the server process's CPU per request, and each ratio its CPU-based
//   twin: that one barely moves when other work shares the machine (PostgreSQL's own CPU is
//   not in it).
//
// `npm run bench -- pglite metrics`: only the parts named (postgres, pglite, metrics, api-keys,
// startup, backups, static-files, nodes, moves, mail); all of them by default.
//
// `npm run bench -- --profile [postgres|pglite]`: instead, a CPU profile of the server while it
// answers (a), then (c) (node --cpu-prof, cropped to each measurement), summarised per group of
// code (bench/cpuprofile.ts). The profiler slows the server: read shares, not req/s.

const CLIENT_DOMAINS = "/api/client/domains";
const BARE = "/api/bench/bare";

async function seedBenchAccount(db: Database) {
  const actor = { type: "system" } as const;
  const account = await createAccount(db, { username: "benchuser", domain: "bench.example" }, actor);
  for (let i = 1; i <= 9; i++) {
    await insertDomainWithZone(db, { accountId: account.id, domain: `site${i}.bench.example`, domainType: "domain" });
  }
  const key = await createApiKey(db, { name: "bench", scope: "account", account_id: account.id }, actor);
  return { accountId: account.id, headers: { "x-api-key": key.key, "x-api-secret": key.secret } };
}

interface BenchServer {
  accountId: number;
  headers: Record<string, string>;
  server: TestServer;
}

/**
 * Runs `use` against a server on a fresh, seeded database of `backend`; afterwards the server is
 * stopped (SIGKILL after `stopGraceMs`) and the database dropped, whatever failed. The seeding
 * connection stays open on PostgreSQL and is closed on PGlite before the server starts (one
 * process per data dir).
 */
async function withBenchServer(
  backend: Backend,
  use: (bench: BenchServer) => Promise<void>,
  { nodeArgs = [] as string[], stopGraceMs = 10_000 } = {},
) {
  await withBenchDatabase(backend, async (connection, database) => {
    const seed = await seedBenchAccount(connection.db);
    if (backend === "pglite") await connection.close();
    // The production path: responses copied by their schema, not also parsed by zod.
    const server = await startServer({ ...database.env, PANEL_BENCH_ROUTES: "1", PANEL_CHECK_RESPONSES: "0" }, nodeArgs);
    try {
      await use({ ...seed, server });
    } finally {
      await server.stop(stopGraceMs);
    }
  });
}

/** Measures one route of `bench`'s server, with the server's CPU per request. */
const measureOn = (bench: { server: TestServer }) => (label: string, path: string, headers: Record<string, string> = {}) =>
  measure(label, `${bench.server.baseUrl}${path}`, headers, undefined, bench.server.process.pid);

/** a's CPU per request over c's: what c/a would be on an otherwise idle machine, if CPU-bound. */
function cpuRatio(measured: Measurement, ...baselines: Measurement[]) {
  const cpu = baselines.map((row) => row.serverCpuUsPerRequest);
  if (measured.serverCpuUsPerRequest === null || cpu.includes(null)) return;
  const baseline = (cpu as number[]).reduce((sum, value) => sum + value, 0) / cpu.length;
  console.log(`  by server CPU per request: ${(baseline / measured.serverCpuUsPerRequest).toFixed(3)} (information)`);
}

async function benchPostgres() {
  await withBenchServer("postgres", async (bench) => {
    const run = measureOn(bench);
    const unauthenticated = `/api/bench/account-domains?account=${bench.accountId}`;
    await warmUp(`${bench.server.baseUrl}${BARE}`);
    await warmUp(`${bench.server.baseUrl}${unauthenticated}`);
    await warmUp(`${bench.server.baseUrl}${CLIENT_DOMAINS}`, bench.headers);
    const bareBefore = await run("(a) bare constant JSON, before", BARE);
    const queryBefore = await run("(b) same list query, no auth, before", unauthenticated);
    const authed = await run("(c) GET /api/client/domains with key", CLIENT_DOMAINS, bench.headers);
    const queryAfter = await run("(b) same list query, no auth, after", unauthenticated);
    const bareAfter = await run("(a) bare constant JSON, after", BARE);
    console.log("\nPostgreSQL");
    printTable([bareBefore, queryBefore, authed, queryAfter, bareAfter]);
    verdict("c/b (authentication cost; b before and after)", ratioToBracket(authed, queryBefore, queryAfter), 0.9);
    cpuRatio(authed, queryBefore, queryAfter);
    verdict("c/a (one authenticated read against no read; a before and after)", ratioToBracket(authed, bareBefore, bareAfter), 0.65);
    cpuRatio(authed, bareBefore, bareAfter);
    verdict("p99/p50 of (c)", authed.p99Ms / authed.p50Ms, 2, "≤");
  });
}

async function benchPglite() {
  await withBenchServer("pglite", async (bench) => {
    const run = measureOn(bench);
    await warmUp(`${bench.server.baseUrl}${BARE}`);
    await warmUp(`${bench.server.baseUrl}${CLIENT_DOMAINS}`, bench.headers);
    const bareBefore = await run("(a) bare constant JSON, before", BARE);
    const authed = await run("(c) GET /api/client/domains with key", CLIENT_DOMAINS, bench.headers);
    const bareAfter = await run("(a) bare constant JSON, after", BARE);
    console.log("\nPGlite (embedded, the default storage)");
    printTable([bareBefore, authed, bareAfter]);
    verdict("c/a on PGlite (a before and after)", ratioToBracket(authed, bareBefore, bareAfter), 0.5);
    cpuRatio(authed, bareBefore, bareAfter);
  });
}

/** process.hrtime in µs: the clock of a .cpuprofile's timestamps (CLOCK_MONOTONIC) on Linux. */
const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);

async function profile(backend: Backend) {
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-cpuprofile-"));
  const windows: { label: string; from: number; to: number; requests: number }[] = [];
  let profiled: TestServer | undefined;
  // The profile is written at exit: a long one takes a while.
  const profiling = { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profileDir}`], stopGraceMs: 120_000 };
  await withBenchServer(backend, async (bench) => {
    profiled = bench.server;
    const base = bench.server.baseUrl;
    await warmUp(`${base}${BARE}`);
    await warmUp(`${base}${CLIENT_DOMAINS}`, bench.headers);
    for (const [label, url, headers] of [
      ["(a) bare constant JSON", `${base}${BARE}`, {}],
      ["(c) GET /api/client/domains with key", `${base}${CLIENT_DOMAINS}`, bench.headers],
    ] as const) {
      const from = monotonicMicros();
      const result = await measure(label, url, headers);
      windows.push({ label, from, to: monotonicMicros(), requests: result.requests });
    }
  }, profiling);
  // Each thread writes a profile (tsx's module loader runs in one of its own): the server's
  // is the one that was busy while the routes were measured.
  const profiles = fs
    .readdirSync(profileDir)
    .map((name) => path.join(profileDir, name))
    .map((file) => ({ file, profile: JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile }));
  const busy = (profile: CpuProfile) => windows.reduce((ms, window) => ms + summariseProfile(profile, window).totalMs, 0);
  const serverProfile = profiles.sort((x, y) => busy(y.profile) - busy(x.profile))[0];
  if (!serverProfile) throw new Error(`the server (exit ${profiled?.process.exitCode}, signal ${profiled?.process.signalCode}) wrote no profile; its output:\n${profiled?.output().slice(-3000)}`);
  for (const window of windows) {
    console.log(`\n### ${window.label} on ${backend}, profiled\n`);
    console.log(formatSummary(summariseProfile(serverProfile.profile, window), window.requests));
  }
  console.log(`\nProfile: ${serverProfile.file} (open it in Chrome DevTools or speedscope for the call tree)`);
}

buildIfNeeded();
const profileFlag = process.argv.indexOf("--profile");
if (profileFlag >= 0) {
  const backend = (process.argv[profileFlag + 1] ?? "postgres") as Backend;
  if (backend !== "postgres" && backend !== "pglite") throw new Error(`--profile takes postgres or pglite, not ${backend}`);
  await profile(backend);
} else {
  const parts: Record<string, () => Promise<void>> = {
    postgres: benchPostgres,
    pglite: benchPglite,
    metrics: async () => (await import("./metrics")).runMetricsBench(),
    "api-keys": async () => (await import("./api-keys")).runApiKeysBench(),
    startup: async () => (await import("./startup")).runStartupBench(),
    backups: async () => (await import("./backups")).runBackupsBench(),
    "static-files": async () => (await import("./static-files")).runStaticFilesBench(),
    nodes: async () => (await import("./nodes")).runNodesBench(),
    moves: async () => (await import("./moves")).runMovesBench(),
    mail: async () => (await import("./mail")).runMailBench(),
  };
  const chosen = process.argv.slice(2);
  const unknown = chosen.filter((name) => !(name in parts));
  if (unknown.length) throw new Error(`unknown bench part ${unknown.join(", ")}: choose from ${Object.keys(parts).join(", ")}`);
  for (const [name, run] of Object.entries(parts)) {
    if (!chosen.length || chosen.includes(name)) await run();
  }
}
