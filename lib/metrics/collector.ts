import { lt, sql } from "drizzle-orm";
import { type Database, getDb } from "@/db/client";
import {
  metricCpuCoreSamples,
  metricDiskSamples,
  metricNetworkSamples,
  metricSamples,
  serviceSamples,
} from "@/db/schema";
import { env } from "@/lib/env";
import { groupServices } from "./services";
import { type MetricsSources, type NetworkCounters, systemSources } from "./sources";

// The metrics collector: one per server process (started from instrumentation.ts), a first
// sample at start so a fresh install has data, then one every METRICS_INTERVAL_S. Each tick
// writes, in one transaction:
//   metric_samples         CPU % (since the previous tick) and RAM (used = total − available)
//   metric_cpu_core_samples  one row per core
//   metric_disk_samples    one row per mounted filesystem (systeminformation's fsSize)
//   metric_network_samples one row per interface: bytes, packets, drops and errors during the
//                          interval (the difference of /proc/net/dev's counters). The first
//                          tick after start has no previous counters and so writes no network
//                          rows (counters since boot are not an interval); an interface whose
//                          counters went down (reset, wrap) is skipped for that tick.
//   service_samples        one row per running service (lib/metrics/services.ts)
// and prunes samples older than METRICS_RETENTION_DAYS. A failing source is logged and left out
// of that tick (without CPU or memory there is no metric_samples row, so no per-core, disk or
// network rows either); a failing write is logged; nothing stops the timer or the server.

export interface CollectorOptions {
  db?: () => Promise<Database>;
  sources?: MetricsSources;
  intervalS?: number;
  retentionDays?: number;
  /** The process the "panel" service is rooted at. */
  panelPid?: number;
  log?: (message: string, error?: unknown) => void;
}

export interface TickSummary {
  sampleId: number | null;
  services: number;
  networks: number;
  failedSources: string[];
}

export interface Collector {
  /** Takes one sample now (the timer's work); never throws. */
  tick(): Promise<TickSummary>;
  start(): Collector;
  /** Stops the timer and waits for a tick in progress. */
  stop(): Promise<void>;
}

const NETWORK_FIELDS = ["rxBytes", "rxPackets", "txBytes", "txPackets", "rxDrops", "rxErrors", "txDrops", "txErrors"] as const;

export function createCollector(options: CollectorOptions = {}): Collector {
  const sources = options.sources ?? systemSources;
  const openDb = options.db ?? getDb;
  const panelPid = options.panelPid ?? process.pid;
  const log = options.log ?? ((message, error) => console.error(`[metrics] ${message}`, error ?? ""));
  let previousCounters: Map<string, NetworkCounters> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<TickSummary> | null = null;
  // The last failure per source: a source that keeps failing is logged once, not every tick.
  const lastFailure = new Map<string, string>();

  async function read<T>(name: string, failed: string[], reading: () => Promise<T>): Promise<T | null> {
    try {
      const value = await reading();
      if (lastFailure.delete(name)) log(`${name} readings are back`);
      return value;
    } catch (error) {
      failed.push(name);
      const message = error instanceof Error ? error.message : String(error);
      if (lastFailure.get(name) !== message) log(`could not read ${name}; left out until it recovers:`, error);
      lastFailure.set(name, message);
      return null;
    }
  }

  function networkDifferences(current: NetworkCounters[]) {
    const previous = previousCounters;
    previousCounters = new Map(current.map((counters) => [counters.interface, counters]));
    if (!previous) return [];
    const rows: NetworkCounters[] = [];
    for (const counters of current) {
      const before = previous.get(counters.interface);
      if (!before) continue;
      const diff = { interface: counters.interface } as NetworkCounters;
      for (const field of NETWORK_FIELDS) diff[field] = counters[field] - before[field];
      if (NETWORK_FIELDS.every((field) => diff[field] >= 0)) rows.push(diff);
    }
    return rows;
  }

  async function takeSample(): Promise<TickSummary> {
    const failed: string[] = [];
    // One after another: the readings are cheap, and sequential reads keep the tick's CPU use flat.
    const cpu = await read("CPU load", failed, () => sources.cpu());
    const memory = await read("memory", failed, () => sources.memory());
    const filesystems = await read("filesystems", failed, () => sources.filesystems());
    const counters = await read("network counters", failed, () => sources.networkCounters());
    const processes = await read("processes", failed, () => sources.processes());
    const networks = counters ? networkDifferences(counters) : [];
    const services = processes ? groupServices(processes, panelPid, memory?.totalBytes ?? null) : [];

    let sampleId: number | null = null;
    try {
      const db = await openDb();
      await db.transaction(async (tx) => {
        if (cpu && memory) {
          const mb = 1024 * 1024;
          const usedBytes = memory.totalBytes - memory.availableBytes;
          const [sample] = await tx
            .insert(metricSamples)
            .values({
              cpuPercent: cpu.percent,
              ramPercent: memory.totalBytes > 0 ? (usedBytes / memory.totalBytes) * 100 : 0,
              ramTotalMb: memory.totalBytes / mb,
              ramUsedMb: usedBytes / mb,
              ramFreeMb: memory.availableBytes / mb,
            })
            .returning({ id: metricSamples.id });
          sampleId = sample.id;
          if (cpu.cores.length) {
            await tx
              .insert(metricCpuCoreSamples)
              .values(cpu.cores.map((percent, index) => ({ sampleId: sample.id, core: `cpu${index}`, percent })));
          }
          if (filesystems?.length) {
            await tx.insert(metricDiskSamples).values(filesystems.map((disk) => ({ sampleId: sample.id, ...disk })));
          }
          if (networks.length) {
            await tx.insert(metricNetworkSamples).values(networks.map((network) => ({ sampleId: sample.id, ...network })));
          }
        }
        if (services.length) await tx.insert(serviceSamples).values(services);
        const cutoff = sql`now() - make_interval(days => ${options.retentionDays ?? env().metricsRetentionDays})`;
        await tx.delete(metricSamples).where(lt(metricSamples.takenAt, cutoff));
        await tx.delete(serviceSamples).where(lt(serviceSamples.takenAt, cutoff));
      });
    } catch (error) {
      log("could not store a metrics sample:", error);
      sampleId = null;
    }
    return { sampleId, services: services.length, networks: networks.length, failedSources: failed };
  }

  const collector: Collector = {
    tick() {
      // A tick still running when the next is due (a slow database) is not doubled up.
      return (inFlight ??= takeSample().finally(() => (inFlight = null)));
    },
    start() {
      if (timer) return collector;
      void collector.tick();
      timer = setInterval(() => void collector.tick(), (options.intervalS ?? env().metricsIntervalS) * 1000);
      timer.unref();
      return collector;
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await inFlight;
    },
  };
  return collector;
}

// instrumentation.ts and the route handlers are separate module instances: the flag lives on
// globalThis so the process runs one collector whichever instance asks.
const globalForCollector = globalThis as unknown as { __panelMetricsCollector?: Collector };

/** Starts this process's collector (once; later calls return the running one). */
export function startMetricsCollector(options?: CollectorOptions): Collector {
  return (globalForCollector.__panelMetricsCollector ??= createCollector(options).start());
}

/** Stops this process's collector, if any (tests, shutdown). */
export async function stopMetricsCollector(): Promise<void> {
  const collector = globalForCollector.__panelMetricsCollector;
  globalForCollector.__panelMetricsCollector = undefined;
  await collector?.stop();
}
