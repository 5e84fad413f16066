import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import os from "node:os";
import { after, before, beforeEach, describe, test } from "node:test";
import { asc, eq, sql } from "drizzle-orm";
import type { Connection } from "@/db/client";
import {
  metricCpuCoreSamples,
  metricDiskSamples,
  metricNetworkSamples,
  metricSamples,
  serviceSamples,
} from "@/db/schema";
import { createCollector } from "@/lib/metrics/collector";
import { groupServices } from "@/lib/provisioning/metrics-services";
import {
  createProcessReader,
  type MetricsSources,
  type NetworkCounters,
  parseProcessStat,
  parseProcNetDev,
  parseResidentBytes,
  parseTotalJiffies,
  type ProcessReading,
  systemSources,
} from "@/lib/provisioning/metrics-sources";
import { createTestDatabase, type TestDatabase, testBackends } from "../support/database";

// The collector against a real database, in process, with scripted sources (so each reading is
// known) and once with the machine's real sources.

const MB = 1024 * 1024;

function counters(name: string, base: number): NetworkCounters {
  return {
    interface: name,
    rxBytes: base * 1000,
    rxPackets: base * 10,
    rxDrops: base,
    rxErrors: 0,
    txBytes: base * 500,
    txPackets: base * 5,
    txDrops: 0,
    txErrors: base,
  };
}

const proc = (pid: number, parentPid: number, name: string, cpuPercent = 1, rssMb = 10): ProcessReading => ({
  pid,
  parentPid,
  name,
  cpuPercent,
  memoryPercent: 0,
  rssBytes: rssMb * MB,
});

function scriptedSources() {
  const state = {
    network: [counters("eth0", 1), counters("lo", 5)],
    failing: new Set<keyof MetricsSources>(),
  };
  const guard = <T>(name: keyof MetricsSources, value: () => T) => async () => {
    if (state.failing.has(name)) throw new Error(`${name} unavailable`);
    return value();
  };
  const sources: MetricsSources = {
    cpu: guard("cpu", () => ({ percent: 12.5, cores: [10, 15] })),
    memory: guard("memory", () => ({ totalBytes: 1000 * MB, availableBytes: 750 * MB })),
    filesystems: guard("filesystems", () => [
      { device: "/dev/vda1", mountedOn: "/", sizeBytes: 100 * MB, usedBytes: 40 * MB, availableBytes: 55 * MB, usedPercent: 42.1 },
    ]),
    networkCounters: guard("networkCounters", () => state.network),
    processes: guard("processes", () => [
      proc(1, 0, "init"),
      proc(100, 1, "nginx", 0.5, 4),
      proc(101, 100, "nginx", 1.5, 6),
      proc(200, 1, "php-fpm8.3", 2),
      proc(300, 1, "node"), // the panel
      proc(301, 300, "goaccess", 3), // the panel's child
      proc(400, 1, "sshd"),
    ]),
  };
  return { sources, state };
}

describe("service grouping", () => {
  test("groups known daemons by name and the panel by process tree; unknown processes are left out", () => {
    const usage = groupServices(
      [
        proc(1, 0, "systemd"),
        proc(10, 1, "nginx", 1, 5),
        proc(11, 10, "nginx", 2, 5),
        proc(20, 1, "apache2"),
        proc(21, 1, "httpd"),
        proc(30, 1, "mariadbd"),
        proc(31, 1, "postgres"),
        proc(32, 31, "postgres"),
        proc(40, 1, "php-fpm8.2"),
        proc(41, 40, "php-fpm8.2"),
        proc(50, 1, "redis-server"),
        proc(51, 1, "memcached"),
        proc(60, 1, "node"),
        proc(61, 60, "postgres"), // started by the panel: counts as the panel
        proc(62, 61, "sh"),
        proc(70, 1, "cron"),
      ],
      60,
      1000 * MB,
    );
    assert.deepEqual(
      usage.map((entry) => [entry.serviceName, entry.processCount]),
      [["apache", 2], ["mariadb", 1], ["memcached", 1], ["nginx", 2], ["panel", 3], ["php-fpm", 2], ["postgresql", 2], ["redis", 1]],
    );
    const nginx = usage.find((entry) => entry.serviceName === "nginx")!;
    assert.equal(nginx.cpuPercent, 3);
    assert.equal(nginx.memoryMb, 10);
    assert.equal(nginx.memoryPercent, 1);
  });

  test("/proc/net/dev counters are parsed per interface", () => {
    const text = [
      "Inter-|   Receive                                                |  Transmit",
      " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed",
      "    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0",
      "  eth0: 929491837 600000 1 2 0 0 0 0 1369094 9000 3 4 0 0 0 0",
    ].join("\n");
    assert.deepEqual(parseProcNetDev(text)[1], {
      interface: "eth0",
      rxBytes: 929491837,
      rxPackets: 600000,
      rxErrors: 1,
      rxDrops: 2,
      txBytes: 1369094,
      txPackets: 9000,
      txErrors: 3,
      txDrops: 4,
    });
  });
});

describe("processes from /proc", () => {
  test("/proc/PID/stat and status are parsed, also a name with spaces and parentheses", () => {
    const stat = "4242 (php-fpm: pool (a) b) S 4200 4242 4242 0 -1 4194560 320 0 0 0 150 75 0 0 20 0 1 0 123 1000 200";
    assert.deepEqual(parseProcessStat(stat), { pid: 4242, name: "php-fpm: pool (a) b", parentPid: 4200, cpuJiffies: 225 });
    assert.equal(parseProcessStat("garbage"), null);
    assert.equal(parseResidentBytes("Name:\tnginx\nVmRSS:\t    5120 kB\nThreads:\t1\n"), 5120 * 1024);
    assert.equal(parseResidentBytes("Name:\tkthreadd\nThreads:\t1\n"), 0, "a kernel thread has no VmRSS");
    assert.equal(parseTotalJiffies("cpu  10 20 30 40 5 0 1 0 0 0\ncpu0 5 10 15 20 2 0 0 0 0 0\n"), 106);
  });

  test("a busy child of this process shows with its name, parent, memory and CPU since the last reading", async () => {
    const read = createProcessReader();
    const busy = spawn(process.execPath, ["-e", "const end = Date.now() + 5000; while (Date.now() < end) {}"]);
    try {
      await read();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const reading = (await read()).find((p) => p.pid === busy.pid);
      assert.ok(reading, "the child is listed");
      assert.equal(reading.name, "node");
      assert.equal(reading.parentPid, process.pid);
      assert.ok(reading.rssBytes > 10 * MB, `rss ${reading.rssBytes}`);
      assert.ok(Math.abs(reading.memoryPercent - (reading.rssBytes / os.totalmem()) * 100) < 1e-9);
      // A busy loop on one core for the last second: up to 100 / cores, less when it had to share.
      const oneCore = 100 / os.availableParallelism();
      assert.ok(reading.cpuPercent > 1 && reading.cpuPercent <= oneCore + 1, `cpu ${reading.cpuPercent} % (one core: ${oneCore} %)`);
    } finally {
      busy.kill();
    }
  });
});

for (const backend of testBackends()) {
  describe(`metrics collector (${backend}, in process)`, () => {
    let database: TestDatabase;
    let connection: Connection;
    const logged: string[] = [];
    const log = (message: string) => void logged.push(message);

    before(async () => {
      database = await createTestDatabase(backend);
      connection = await database.open();
    });
    after(async () => {
      await connection?.close();
      await database?.drop();
    });
    beforeEach(async () => {
      logged.length = 0;
      await connection.db.delete(metricSamples);
      await connection.db.delete(serviceSamples);
    });

    const collectorWith = (sources: MetricsSources) =>
      createCollector({ db: async () => connection.db, sources, panelPid: 300, intervalS: 60, retentionDays: 30, log });

    test("a tick stores CPU, cores, RAM, disks and services; network rows hold per-interval differences from the second tick", async () => {
      const { sources, state } = scriptedSources();
      const collector = collectorWith(sources);
      const first = await collector.tick();
      assert.ok(first.sampleId);
      assert.equal(first.networks, 0, "no previous counters on the first tick");

      const [sample] = await connection.db.select().from(metricSamples).where(eq(metricSamples.id, first.sampleId));
      assert.equal(sample.cpuPercent, 12.5);
      assert.equal(sample.ramTotalMb, 1000);
      assert.equal(sample.ramUsedMb, 250);
      assert.equal(sample.ramFreeMb, 750);
      assert.equal(sample.ramPercent, 25);
      const cores = await connection.db.select().from(metricCpuCoreSamples).orderBy(asc(metricCpuCoreSamples.core));
      assert.deepEqual(cores.map((core) => [core.core, core.percent]), [["cpu0", 10], ["cpu1", 15]]);
      const [disk] = await connection.db.select().from(metricDiskSamples);
      assert.equal(disk.mountedOn, "/");
      assert.equal(disk.availableBytes, 55 * MB);
      const services = await connection.db.select().from(serviceSamples).orderBy(asc(serviceSamples.serviceName));
      assert.deepEqual(
        services.map((row) => [row.serviceName, row.processCount, row.cpuPercent]),
        [["nginx", 2, 2], ["panel", 2, 4], ["php-fpm", 1, 2]],
      );

      state.network = [counters("eth0", 4), counters("lo", 3), counters("wg0", 1)];
      const second = await collector.tick();
      assert.equal(second.networks, 1, "lo went backwards (reset) and wg0 is new: both skipped this tick");
      const [eth0] = await connection.db
        .select()
        .from(metricNetworkSamples)
        .where(eq(metricNetworkSamples.sampleId, second.sampleId!));
      assert.deepEqual(
        { ...eth0, sampleId: undefined },
        { sampleId: undefined, interface: "eth0", rxBytes: 3000, rxPackets: 30, rxDrops: 3, rxErrors: 0, txBytes: 1500, txPackets: 15, txDrops: 0, txErrors: 3 },
      );
      assert.deepEqual(logged, []);
    });

    test("a failing source is logged once and left out; the other readings are still stored", async () => {
      const { sources, state } = scriptedSources();
      const collector = collectorWith(sources);
      state.failing.add("processes");
      const first = await collector.tick();
      await collector.tick();
      assert.deepEqual(first.failedSources, ["processes"]);
      assert.ok(first.sampleId);
      assert.equal((await connection.db.select().from(metricSamples)).length, 2);
      assert.equal((await connection.db.select().from(serviceSamples)).length, 0);
      assert.deepEqual(logged, ["could not read processes; left out until it recovers:"], "logged once for two failing ticks");

      state.failing = new Set(["cpu"]);
      const withoutCpu = await collector.tick();
      assert.equal(withoutCpu.sampleId, null, "no CPU: no metrics sample row");
      assert.equal((await connection.db.select().from(serviceSamples)).length, 3, "services are stored all the same");
      assert.ok(logged.includes("processes readings are back"));
    });

    test("a failing database is logged and the collector keeps going", async () => {
      const { sources } = scriptedSources();
      let broken = true;
      const collector = createCollector({
        db: async () => (broken ? Promise.reject(new Error("database is down")) : connection.db),
        sources,
        panelPid: 300,
        retentionDays: 30,
        log,
      });
      const failed = await collector.tick();
      assert.equal(failed.sampleId, null);
      assert.deepEqual(logged, ["could not store a metrics sample:"]);
      broken = false;
      assert.ok((await collector.tick()).sampleId);
    });

    test("samples older than the retention period are pruned, with their per-core, disk and network rows", async () => {
      const old = new Date(Date.now() - 31 * 86_400_000);
      const [stale] = await connection.db
        .insert(metricSamples)
        .values({ takenAt: old, cpuPercent: 1, ramPercent: 1, ramTotalMb: 1, ramUsedMb: 1, ramFreeMb: 0 })
        .returning();
      await connection.db.insert(metricCpuCoreSamples).values({ sampleId: stale.id, core: "cpu0", percent: 1 });
      const recent = new Date(Date.now() - 29 * 86_400_000);
      await connection.db
        .insert(metricSamples)
        .values({ takenAt: recent, cpuPercent: 2, ramPercent: 2, ramTotalMb: 2, ramUsedMb: 2, ramFreeMb: 0 });
      await connection.db
        .insert(serviceSamples)
        .values({ takenAt: old, serviceName: "nginx", cpuPercent: 0, memoryMb: 0, memoryPercent: 0, processCount: 1 });

      await collectorWith(scriptedSources().sources).tick();
      const samples = await connection.db.select().from(metricSamples).orderBy(asc(metricSamples.takenAt));
      assert.deepEqual(samples.map((row) => row.cpuPercent), [2, 12.5]);
      const staleCores = await connection.db
        .select({ count: sql<number>`count(*)::int` })
        .from(metricCpuCoreSamples)
        .where(eq(metricCpuCoreSamples.sampleId, stale.id));
      assert.equal(staleCores[0].count, 0);
      const services = await connection.db.select().from(serviceSamples);
      assert.ok(services.every((row) => row.takenAt > old));
    });

    test("with the machine's real sources a tick stores CPU, memory, disks and the panel's own usage", async () => {
      const collector = createCollector({ db: async () => connection.db, sources: systemSources, retentionDays: 30, log });
      const tick = await collector.tick();
      assert.deepEqual(tick.failedSources, []);
      assert.ok(tick.sampleId);
      const [sample] = await connection.db.select().from(metricSamples).where(eq(metricSamples.id, tick.sampleId));
      assert.ok(sample.cpuPercent >= 0 && sample.cpuPercent <= 100);
      assert.ok(sample.ramTotalMb > 0 && sample.ramUsedMb > 0);
      const cores = await connection.db.select().from(metricCpuCoreSamples).where(eq(metricCpuCoreSamples.sampleId, tick.sampleId));
      assert.ok(cores.length >= 1);
      const disks = await connection.db.select().from(metricDiskSamples).where(eq(metricDiskSamples.sampleId, tick.sampleId));
      assert.ok(disks.some((disk) => disk.mountedOn === "/"));
      const panel = await connection.db.select().from(serviceSamples).where(eq(serviceSamples.serviceName, "panel"));
      assert.equal(panel.length, 1);
      assert.ok(panel[0].processCount >= 1 && panel[0].memoryMb > 0);
      assert.ok((await collector.tick()).networks >= 1, "the second tick has interval counters");
    });
  });
}
