import fs from "node:fs";
import { sql } from "drizzle-orm";
import type { Database } from "@/db/client";
import { createApiKey } from "@/lib/api-keys/service";
import { createCollector } from "@/lib/metrics/collector";
import { computeMetricsStats } from "@/lib/metrics/service";
import { systemSources } from "@/lib/provisioning/metrics-sources";
import type { Backend } from "../tests/support/database";
import { startServer } from "../tests/support/server";
import { measure, printTable, ratioToBracket, verdict, warmUp, withBenchDatabase } from "./support";

// Metrics bench (called from bench/run.ts):
//   (d) GET /api/metrics/stats served from its 60 s cache, with an admin key, against the bare
//       constant-JSON route measured just before and after it — target ≥ 0.95 (a cached read
//       costs about nothing)
//   (e) the uncached statistics over 30 days of one-minute samples (43,200 samples, 4 cores,
//       2 disks, 2 interfaces: ~390,000 rows) seeded straight into the database — target < 100 ms
//       (median of 10 computations, after one warm-up), on PostgreSQL and on PGlite
//   (f) the collector's CPU at a 60 s interval — target < 0.5 % of one core: process.cpuUsage()
//       (user + system) around real ticks (systeminformation, writes to PostgreSQL), plus the CPU
//       of the child processes a tick runs (ps, df), read from /proc/self/stat (cutime + cstime),
//       divided by 60 s. The database server's own CPU is not counted.

const SAMPLES = 43_200;

/** 30 days of one-minute samples with a daily rhythm and noise, and their per-core, disk and network rows. */
async function seedMonth(db: Database) {
  await db.execute(sql`
    INSERT INTO metric_samples (taken_at, cpu_percent, ram_percent, ram_total_mb, ram_used_mb, ram_free_mb)
    SELECT now() - (${SAMPLES - 1} - g) * interval '1 minute',
           least(100, 25 + 15 * sin(g / 229.2) + random() * 20),
           p, 16384, 163.84 * p, 16384 - 163.84 * p
    FROM generate_series(0, ${SAMPLES - 1}) AS g, LATERAL (SELECT 45 + 10 * sin(g / 229.2) + random() * 5 AS p) AS r`);
  await db.execute(sql`
    INSERT INTO metric_cpu_core_samples (sample_id, core, percent)
    SELECT s.id, 'cpu' || c, least(100, greatest(0, s.cpu_percent + (random() - 0.5) * 30))
    FROM metric_samples s CROSS JOIN generate_series(0, 3) AS c`);
  await db.execute(sql`
    INSERT INTO metric_disk_samples (sample_id, device, mounted_on, size_bytes, used_bytes, available_bytes, used_percent)
    SELECT s.id, d.device, d.mount, d.size, d.used, d.size - d.used - d.size / 20, 100.0 * d.used / (d.size - d.size / 20)
    FROM metric_samples s,
         LATERAL (VALUES ('/dev/vda1', '/', 107374182400::bigint, 42949672960 + s.id::bigint * 100000),
                         ('/dev/vdb1', '/var/lib/mysql', 536870912000::bigint, 107374182400 + s.id::bigint * 500000))
           AS d(device, mount, size, used)`);
  await db.execute(sql`
    INSERT INTO metric_network_samples (sample_id, interface, rx_bytes, rx_packets, tx_bytes, tx_packets, rx_drops, rx_errors, tx_drops, tx_errors)
    SELECT s.id, n.name, n.rx, n.rx / 900, n.tx, n.tx / 1100, (random() < 0.01)::int, 0, 0, (random() < 0.001)::int
    FROM metric_samples s,
         LATERAL (VALUES ('eth0', (random() * 50000000)::bigint, (random() * 80000000)::bigint),
                         ('lo', (random() * 2000000)::bigint, (random() * 2000000)::bigint)) AS n(name, rx, tx)`);
  await db.execute(sql`ANALYZE`);
}

async function timeStats(backend: Backend): Promise<number> {
  return withBenchDatabase(backend, async (connection) => {
    await seedMonth(connection.db);
    await computeMetricsStats(connection.db);
    const times: number[] = [];
    for (let i = 0; i < 10; i++) {
      const start = performance.now();
      await computeMetricsStats(connection.db);
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    const median = (times[4] + times[5]) / 2;
    console.log(`(e) uncached stats, ${backend}: median ${median.toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[9].toFixed(1)})`);
    return median;
  });
}

const childrenCpuMs = () => {
  const fields = fs.readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  return (Number(fields[13]) + Number(fields[14])) * 10; // cutime + cstime, in 1/100 s ticks
};

export async function runMetricsBench() {
  console.log("\n## Metrics");
  const statsMs = { postgres: await timeStats("postgres"), pglite: await timeStats("pglite") };

  await withBenchDatabase("postgres", async (connection, database) => {
    await seedMonth(connection.db);

    const collector = createCollector({ db: async () => connection.db, sources: systemSources, retentionDays: 30, log: console.error });
    await collector.tick(); // warm-up: systeminformation's first readings
    const ticks: { selfMs: number; childMs: number }[] = [];
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const cpu0 = process.cpuUsage();
      const child0 = childrenCpuMs();
      await collector.tick();
      const cpu = process.cpuUsage(cpu0);
      ticks.push({ selfMs: (cpu.user + cpu.system) / 1000, childMs: childrenCpuMs() - child0 });
    }
    const selfMs = ticks.reduce((sum, tick) => sum + tick.selfMs, 0) / ticks.length;
    const childMs = ticks.reduce((sum, tick) => sum + tick.childMs, 0) / ticks.length;
    console.log(`(f) collector tick: ${selfMs.toFixed(1)} ms CPU in process + ${childMs.toFixed(1)} ms in child processes (mean of ${ticks.length})`);

    const key = await createApiKey(connection.db, { name: "bench metrics", scope: "admin" }, { type: "system" });
    const server = await startServer({ ...database.env, PANEL_BENCH_ROUTES: "1", PANEL_CHECK_RESPONSES: "0" });
    try {
      const base = server.baseUrl;
      const headers = { "x-api-key": key.key, "x-api-secret": key.secret };
      await warmUp(`${base}/api/bench/bare`);
      await warmUp(`${base}/api/metrics/stats`, headers);
      const bareBefore = await measure("(a) bare constant JSON, before", `${base}/api/bench/bare`);
      const stats = await measure("(d) GET /api/metrics/stats, cached, with key", `${base}/api/metrics/stats`, headers);
      const bareAfter = await measure("(a) bare constant JSON, after", `${base}/api/bench/bare`);
      printTable([bareBefore, stats, bareAfter]);
      verdict("d/a (cached stats against the bare route before and after)", ratioToBracket(stats, bareBefore, bareAfter), 0.95);
    } finally {
      await server.stop();
    }
    verdict("(e) uncached stats, PostgreSQL, ms", statsMs.postgres, 100, "<");
    verdict("(e) uncached stats, PGlite, ms", statsMs.pglite, 100, "<");
    verdict("(f) collector, % of one core at 60 s (in process + children)", ((selfMs + childMs) / 60_000) * 100, 0.5, "<");
  });
}
