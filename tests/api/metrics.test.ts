import assert from "node:assert/strict";
import os from "node:os";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import type { Database } from "@/db/client";
import { metricSamples } from "@/db/schema";
import {
  metricsHistoryRecordSchema,
  metricsStatsSchema,
  serviceHistoryRecordSchema,
  systemInfoSchema,
} from "@/lib/metrics/schemas";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { seedTenants } from "../support/seed";

// /api/metrics/* over HTTP against the real server, whose collector takes its first sample at
// start (METRICS_INTERVAL_S=3600 in tests, so exactly one).

async function seed(db: Database) {
  const tenants = await seedTenants(db);
  // 20 older samples, one a minute, ending an hour ago.
  for (let i = 0; i < 20; i++) {
    await db.insert(metricSamples).values({
      takenAt: new Date(Date.now() - (60 + i) * 60_000),
      cpuPercent: i,
      ramPercent: 50,
      ramTotalMb: 1000,
      ramUsedMb: 500,
      ramFreeMb: 500,
    });
  }
  return tenants;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of testBackends()) {
  describe(`metrics API (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    let admin: ReturnType<typeof apiClient>;

    before(async () => {
      env = await createEnvironment(backend, seed);
      admin = apiClient(env.server.baseUrl, env.seed.adminKey);
      // Wait for the collector's first sample (clearing the caches so each look is fresh).
      for (let attempt = 0; attempt < 150; attempt++) {
        await admin.post("/api/metrics/clear-cache", { clear_service_history: true, clear_stats: true });
        const history = await admin.get("/api/metrics/history");
        if (history.body[0]?.cpu_percent !== 0 || history.body[0]?.ram_percent !== 50) break;
        await sleep(200);
      }
    });
    after(async () => {
      await env?.teardown();
    });

    test("the collector stores a first sample at start: newest in history, with cores, disks and the panel's own service", async () => {
      const history = await admin.get("/api/metrics/history?limit=1");
      assert.equal(history.status, 200);
      const [newest] = history.body.map((row: unknown) => metricsHistoryRecordSchema.parse(row));
      assert.ok(Date.now() - newest.timestamp < 120_000, "taken at start, in milliseconds");
      assert.ok(Math.abs(newest.ram_total_mb - os.totalmem() / 1024 / 1024) < 1);

      const stats = await admin.get("/api/metrics/stats");
      assert.equal(stats.status, 200);
      const parsed = metricsStatsSchema.parse(stats.body);
      assert.equal(parsed.cpu_cores.length, os.cpus().length);
      assert.ok(parsed.disks.some((disk) => disk.mounted_on === "/"));
      assert.deepEqual(parsed.networks, [], "one tick so far: no interval counters yet");

      const services = await admin.get("/api/metrics/service-history");
      assert.equal(services.status, 200);
      const rows = services.body.map((row: unknown) => serviceHistoryRecordSchema.parse(row));
      assert.ok(rows.some((row: { service_name: string }) => row.service_name === "panel"));
    });

    test("history: default 15 records, newest first; limit chooses how many", async () => {
      const history = await admin.get("/api/metrics/history");
      assert.equal(history.status, 200);
      assert.equal(history.body.length, 15);
      const stamps = history.body.map((row: { timestamp: number }) => row.timestamp);
      assert.deepEqual(stamps, [...stamps].sort((a, b) => b - a));
      assert.equal(history.body[1].cpu_percent, 0, "the newest seeded sample follows the collector's");
      assert.equal((await admin.get("/api/metrics/history?limit=100")).body.length, 21);
      assert.equal((await admin.get("/api/metrics/history?limit=3")).body.length, 3);
    });

    test("service history: limit chooses how many; without it every record", async () => {
      const all = await admin.get("/api/metrics/service-history");
      const one = await admin.get("/api/metrics/service-history?limit=1");
      assert.equal(one.status, 200);
      assert.equal(one.body.length, 1);
      assert.ok(all.body.length >= 1);
      assert.deepEqual(one.body[0], all.body[0]);
    });

    test("422 JSON for a limit out of range or not an integer", async () => {
      for (const path of [
        "/api/metrics/history?limit=0",
        "/api/metrics/history?limit=101",
        "/api/metrics/history?limit=abc",
        "/api/metrics/history?limit=1.5",
        "/api/metrics/service-history?limit=0",
        "/api/metrics/service-history?limit=-3",
      ]) {
        const response = await admin.get(path);
        assert.equal(response.status, 422, path);
        assert.ok(response.body.errors.limit, path);
      }
      assert.equal((await admin.get("/api/metrics/service-history?limit=100000")).status, 200, "no maximum");
    });

    test("system info describes the server's machine", async () => {
      const response = await admin.get("/api/metrics/system-info");
      assert.equal(response.status, 200);
      const info = systemInfoSchema.parse(response.body);
      assert.equal(info.hostname, os.hostname());
      assert.equal(info.cpu.cores, os.cpus().length);
      assert.equal(info.memory.total, os.totalmem());
    });

    test("clear-cache answers what it cleared; the body is optional; a bad body is a 422", async () => {
      const empty = await admin.post("/api/metrics/clear-cache");
      assert.equal(empty.status, 200);
      assert.equal(empty.body.message, "Cleared the cache of metrics history (limit 15)");
      const named = await admin.post("/api/metrics/clear-cache", { limit: 5, clear_system_info: true });
      assert.equal(named.body.message, "Cleared the cache of metrics history (limit 5) and system info");
      const bad = await admin.post("/api/metrics/clear-cache", { limit: "five", clear_stats: "yes" });
      assert.equal(bad.status, 422);
      assert.ok(bad.body.errors.limit && bad.body.errors.clear_stats);
    });

    if (backend === "postgres") {
      // A second writer beside the server exists only on PostgreSQL.
      test("history and stats are served from the cache until clear-cache names them", async () => {
        const db = env.db!;
        const history = await admin.get("/api/metrics/history?limit=2");
        const stats = await admin.get("/api/metrics/stats");
        await db.insert(metricSamples).values({ cpuPercent: 97.5, ramPercent: 1, ramTotalMb: 1, ramUsedMb: 1, ramFreeMb: 0 });
        assert.deepEqual((await admin.get("/api/metrics/history?limit=2")).body, history.body, "cached");
        assert.deepEqual((await admin.get("/api/metrics/stats")).body, stats.body, "cached");

        await admin.post("/api/metrics/clear-cache", { limit: 2 });
        assert.equal((await admin.get("/api/metrics/history?limit=2")).body[0].cpu_percent, 97.5, "fresh after clear-cache");
        assert.deepEqual((await admin.get("/api/metrics/stats")).body, stats.body, "stats not named: still cached");
        await admin.post("/api/metrics/clear-cache", { limit: 2, clear_stats: true });
        // The collector's own samples may reach 100 % on a busy machine: the fresh figures differ
        // from the cached ones and take the inserted sample in, whatever the real ones were.
        const fresh = (await admin.get("/api/metrics/stats")).body;
        assert.notDeepEqual(fresh.cpu, stats.body.cpu, "fresh after clear-cache names stats");
        assert.ok(fresh.cpu.maximum >= 97.5);
      });

      test("500 with an error naming the read when the database cannot answer it", async () => {
        const db = env.db!;
        await admin.post("/api/metrics/clear-cache", { clear_service_history: true });
        await db.execute(sql`ALTER TABLE service_samples RENAME TO service_samples_away`);
        try {
          const response = await admin.get("/api/metrics/service-history?limit=7");
          assert.equal(response.status, 500);
          assert.match(response.body.error, /^Could not read service history/);
          assert.doesNotMatch(response.body.error, /service_samples/, "the driver's words stay in the log");
        } finally {
          await db.execute(sql`ALTER TABLE service_samples_away RENAME TO service_samples`);
        }
        assert.equal((await admin.get("/api/metrics/service-history?limit=7")).status, 200, "the failure was not cached");
      });
    }
  });
}
