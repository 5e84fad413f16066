import assert from "node:assert/strict";
import os from "node:os";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import type { Connection } from "@/db/client";
import {
  metricCpuCoreSamples,
  metricDiskSamples,
  metricNetworkSamples,
  metricSamples,
  serviceSamples,
} from "@/db/schema";
import { AppError } from "@/lib/errors";
import { metricsStatsSchema, systemInfoSchema } from "@/lib/metrics/schemas";
import { computeMetricsStats, createMetricsService, type MetricsServiceDeps } from "@/lib/metrics/service";
import { readSystemInfo } from "@/lib/provisioning/system-info";
import { createTestDatabase, type TestDatabase, testBackends } from "../support/database";

// The metrics reads against a real database, in process: the SQL statistics, newest-first
// lists, the 60 s cache (with a clock the test moves), clear-cache, and failing sources.

const GIB = 1024 ** 3;

async function insertSample(
  connection: Connection,
  ageMinutes: number,
  values: { cpu: number; ram: number; cores: number[]; diskUsedGb: number; rxBytes: number; rxDrops: number },
) {
  const takenAt = new Date(Date.now() - ageMinutes * 60_000);
  const [sample] = await connection.db
    .insert(metricSamples)
    .values({ takenAt, cpuPercent: values.cpu, ramPercent: values.ram, ramTotalMb: 1000, ramUsedMb: values.ram * 10, ramFreeMb: 1000 - values.ram * 10 })
    .returning({ id: metricSamples.id });
  await connection.db
    .insert(metricCpuCoreSamples)
    .values(values.cores.map((percent, index) => ({ sampleId: sample.id, core: `cpu${index}`, percent })));
  await connection.db.insert(metricDiskSamples).values({
    sampleId: sample.id,
    device: "/dev/vda1",
    mountedOn: "/",
    sizeBytes: 100 * GIB,
    usedBytes: values.diskUsedGb * GIB,
    availableBytes: (95 - values.diskUsedGb) * GIB,
    usedPercent: values.diskUsedGb + 0.4,
  });
  await connection.db.insert(metricNetworkSamples).values({
    sampleId: sample.id,
    interface: "eth0",
    rxBytes: values.rxBytes,
    rxPackets: values.rxBytes / 100,
    txBytes: values.rxBytes / 2,
    txPackets: values.rxBytes / 200,
    rxDrops: values.rxDrops,
    rxErrors: 0,
    txDrops: 1,
    txErrors: 0,
  });
  return sample.id;
}

for (const backend of testBackends()) {
  describe(`metrics reads (${backend}, in process)`, () => {
    let database: TestDatabase;
    let connection: Connection;
    let clock = 1_000_000;
    let systemInfoCalls = 0;
    let failDb = false;
    const deps: MetricsServiceDeps = {
      db: async () => {
        if (failDb) throw new Error("connection refused");
        return connection.db;
      },
      systemInfo: async () => {
        systemInfoCalls++;
        return readSystemInfo();
      },
      now: () => clock,
    };

    before(async () => {
      database = await createTestDatabase(backend);
      connection = await database.open();
      // Outside the 24 h window: counted by history, not by stats.
      await insertSample(connection, 25 * 60, { cpu: 99, ram: 99, cores: [99, 99], diskUsedGb: 90, rxBytes: 9_000_000, rxDrops: 50 });
      await insertSample(connection, 30, { cpu: 10, ram: 40, cores: [5, 15], diskUsedGb: 20, rxBytes: 1000, rxDrops: 1 });
      await insertSample(connection, 20, { cpu: 30, ram: 50, cores: [25, 35], diskUsedGb: 30, rxBytes: 3000, rxDrops: 2 });
      await insertSample(connection, 10, { cpu: 20, ram: 60, cores: [30, 10], diskUsedGb: 25, rxBytes: 2000, rxDrops: 3 });
      for (const [age, name] of [[30, "nginx"], [20, "nginx"], [10, "panel"]] as const) {
        await connection.db.insert(serviceSamples).values({
          takenAt: new Date(Date.now() - age * 60_000),
          serviceName: name,
          cpuPercent: 1.5,
          memoryMb: 12.5,
          memoryPercent: 0.2,
          processCount: 3,
        });
      }
    });
    after(async () => {
      await connection?.close();
      await database?.drop();
    });

    test("stats summarise the last 24 hours in SQL: CPU, cores, RAM, disks, networks", async () => {
      const stats = metricsStatsSchema.parse(await computeMetricsStats(connection.db));
      assert.deepEqual(stats.cpu, { average: 20, minimum: 10, maximum: 30 });
      assert.deepEqual(stats.ram, { average: 50, minimum: 40, maximum: 60 });
      assert.deepEqual(stats.cpu_cores, [
        { core: "cpu0", current: 30, average: 20, minimum: 5, maximum: 30 },
        { core: "cpu1", current: 10, average: 20, minimum: 10, maximum: 35 },
      ]);
      assert.equal(stats.disks.length, 1);
      const disk = stats.disks[0];
      assert.equal(disk.device, "/dev/vda1");
      assert.equal(disk.mounted_on, "/");
      assert.ok(Math.abs(disk.average - 25.4) < 1e-9);
      assert.equal(disk.minimum, 20);
      assert.equal(disk.maximum, 30);
      assert.ok(Math.abs(disk.avg_used_gb - 25) < 1e-9);
      assert.equal(disk.max_used_gb, 30);
      assert.equal(disk.current_used_gb, 25);
      assert.equal(disk.current_free_gb, 70);
      assert.equal(disk.current_total_gb, 100);
      assert.equal(disk.current_used_percentage, 25);
      assert.deepEqual(stats.networks, [
        {
          interface: "eth0",
          avg_rx_bytes: 2000,
          avg_rx_packets: 20,
          avg_tx_bytes: 1000,
          avg_tx_packets: 10,
          current_rx_bytes: 2000,
          current_rx_packets: 20,
          current_tx_bytes: 1000,
          current_tx_packets: 10,
          max_rx_bytes: 3000,
          max_rx_packets: 30,
          max_tx_bytes: 1500,
          max_tx_packets: 15,
          total_rx_drops: 6,
          total_rx_errors: 0,
          total_tx_drops: 3,
          total_tx_errors: 0,
        },
      ]);
    });

    test("history is newest first, limited, with millisecond timestamps", async () => {
      const service = createMetricsService(deps);
      const all = await service.getMetricsHistory(100);
      assert.equal(all.length, 4);
      assert.deepEqual(all.map((row) => row.cpu_percent), [20, 30, 10, 99]);
      assert.ok(Math.abs(all[0].timestamp - (Date.now() - 10 * 60_000)) < 60_000, "milliseconds, about 10 minutes ago");
      const two = await service.getMetricsHistory(2);
      assert.deepEqual(two.map((row) => row.id), all.slice(0, 2).map((row) => row.id));
      assert.equal(two[0].ram_free_mb, 400);
    });

    test("service history is newest first; no limit returns every record", async () => {
      const service = createMetricsService(deps);
      const all = await service.getServiceHistory();
      assert.deepEqual(all.map((row) => row.service_name), ["panel", "nginx", "nginx"]);
      assert.equal(all[0].process_count, 3);
      assert.equal((await service.getServiceHistory(1)).length, 1);
    });

    test("reads are served from the cache for 60 s, then read fresh", async () => {
      const service = createMetricsService(deps);
      const before = await service.getMetricsHistory(15);
      const statsBefore = await service.getMetricsStats();
      const id = await insertSample(connection, 0, { cpu: 80, ram: 80, cores: [80, 80], diskUsedGb: 40, rxBytes: 1000, rxDrops: 0 });
      try {
        clock += 59_000;
        assert.deepEqual(await service.getMetricsHistory(15), before, "within 60 s: the cached list");
        assert.deepEqual(await service.getMetricsStats(), statsBefore);
        clock += 1_000;
        const after = await service.getMetricsHistory(15);
        assert.equal(after[0].id, id, "after 60 s: read again");
        assert.equal((await service.getMetricsStats()).cpu.maximum, 80);
      } finally {
        await connection.db.delete(metricSamples).where(sql`${metricSamples.id} = ${id}`);
      }
    });

    test("clear-cache clears exactly the caches it names", async () => {
      const service = createMetricsService(deps);
      await service.getMetricsHistory(15);
      await service.getMetricsHistory(5);
      await service.getMetricsStats();
      await service.getServiceHistory();
      const callsBefore = systemInfoCalls;
      await service.getSystemInfo();
      const id = await insertSample(connection, 0, { cpu: 70, ram: 70, cores: [70, 70], diskUsedGb: 40, rxBytes: 1000, rxDrops: 0 });
      try {
        assert.deepEqual(await service.clearMetricsCache(), { message: "Cleared the cache of metrics history (limit 15)" });
        assert.equal((await service.getMetricsHistory(15))[0].id, id, "the default limit's cache was cleared");
        assert.notEqual((await service.getMetricsHistory(5))[0].id, id, "another limit's cache was not");
        assert.notEqual((await service.getMetricsStats()).cpu.maximum, 70, "stats were not cleared");

        const { message } = await service.clearMetricsCache({ limit: 5, clear_stats: true, clear_system_info: true, clear_service_history: true });
        assert.equal(message, "Cleared the cache of metrics history (limit 5), stats, system info and service history (every limit)");
        assert.equal((await service.getMetricsHistory(5))[0].id, id);
        assert.equal((await service.getMetricsStats()).cpu.maximum, 70);
        await service.getSystemInfo();
        assert.equal(systemInfoCalls, callsBefore + 2, "system info was read again");
      } finally {
        await connection.db.delete(metricSamples).where(sql`${metricSamples.id} = ${id}`);
      }
    });

    test("a failing source answers an error naming the read, and the failure is not cached", async () => {
      const service = createMetricsService(deps);
      failDb = true;
      try {
        for (const [read, what] of [
          [() => service.getMetricsHistory(), "metrics history"],
          [() => service.getMetricsStats(), "metrics stats"],
          [() => service.getServiceHistory(3), "service history"],
        ] as const) {
          await assert.rejects(read, (error: unknown) => {
            assert.ok(error instanceof AppError);
            assert.equal(error.code, "INTERNAL");
            assert.equal(error.message, `Could not read ${what}; the panel's log says why`);
            assert.match(String((error.cause as Error).message), /connection refused/, "the cause is kept for the log");
            return true;
          });
        }
      } finally {
        failDb = false;
      }
      assert.equal((await service.getMetricsHistory()).length, 4, "read again once the source works");

      const broken = createMetricsService({ ...deps, systemInfo: () => Promise.reject(new Error("no /proc")) });
      await assert.rejects(broken.getSystemInfo(), /^AppError: Could not read system info; the panel's log says why$/);
    });

    test("system info describes this machine live", async () => {
      const info = systemInfoSchema.parse(await readSystemInfo());
      assert.equal(info.hostname, os.hostname());
      assert.equal(info.cpu.cores, os.cpus().length);
      assert.equal(info.memory.total, os.totalmem());
      assert.equal(info.memory.used + info.memory.free, info.memory.total);
      assert.ok(info.networkInterfaces.some((entry) => entry.name === "lo"));
      assert.ok(info.uptime.seconds > 0);
      assert.match(info.uptime.formatted, /\d+s$/);
      assert.equal(info.nodeVersion, process.version);
    });
  });
}
