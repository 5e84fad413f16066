import { and, eq, gt, lt, sql } from "drizzle-orm";
import { type Database, getDb, type Queryable } from "@/db/client";
import {
  metricCpuCoreSamples,
  metricDiskSamples,
  metricNetworkSamples,
  metricSamples,
  serviceSamples,
} from "@/db/schema";
import { env } from "@/lib/env";
import { createSampler, type MachineSample, type SamplerOptions } from "@/lib/provisioning/metrics-sample";
import { machineSampleSchema } from "./schemas";

// The metrics collector: one per server process (started from instrumentation.ts), a first
// sample of the panel's machine at start so a fresh install has data, then one every
// METRICS_INTERVAL_S (lib/provisioning/metrics-sample.ts takes it). Each sample is written in one
// transaction:
//   metric_samples         CPU % (since the previous sample) and RAM (used = total − available)
//   metric_cpu_core_samples  one row per core
//   metric_disk_samples    one row per mounted filesystem (systeminformation's fsSize)
//   metric_network_samples one row per interface: its counters during the interval
//   service_samples        one row per running service
// and the panel's own tick prunes samples older than METRICS_RETENTION_DAYS (every node's). Rows
// carry the node they describe: null for the panel's machine, a node's id for the samples its
// agent sends (recordNodeSample). Without CPU or memory there is no metric_samples row, so no
// per-core, disk or network rows either; a failing write is logged; nothing stops the timer or
// the server.

export interface CollectorOptions extends SamplerOptions {
  db?: () => Promise<Database>;
  intervalS?: number;
  retentionDays?: number;
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

type StoredSample = Omit<MachineSample, "failedSources">;

/**
 * Writes one sample of the machine `nodeId` describes (null: the panel's); the id of its
 * metric_samples row, if any. The row's own columns come last: a reading never sets them.
 */
async function storeSample(tx: Queryable, nodeId: number | null, sample: StoredSample): Promise<number | null> {
  const { cpu, memory, filesystems, networks, services } = sample;
  let sampleId: number | null = null;
  if (cpu && memory) {
    const mb = 1024 * 1024;
    const usedBytes = memory.totalBytes - memory.availableBytes;
    const [row] = await tx
      .insert(metricSamples)
      .values({
        nodeId,
        cpuPercent: cpu.percent,
        ramPercent: memory.totalBytes > 0 ? (usedBytes / memory.totalBytes) * 100 : 0,
        ramTotalMb: memory.totalBytes / mb,
        ramUsedMb: usedBytes / mb,
        ramFreeMb: memory.availableBytes / mb,
      })
      .returning({ id: metricSamples.id });
    sampleId = row.id;
    if (cpu.cores.length) {
      await tx.insert(metricCpuCoreSamples).values(cpu.cores.map((percent, index) => ({ sampleId: row.id, core: `cpu${index}`, percent })));
    }
    if (filesystems.length) await tx.insert(metricDiskSamples).values(filesystems.map((disk) => ({ ...disk, sampleId: row.id })));
    if (networks.length) await tx.insert(metricNetworkSamples).values(networks.map((network) => ({ ...network, sampleId: row.id })));
  }
  if (services.length) await tx.insert(serviceSamples).values(services.map((service) => ({ ...service, nodeId })));
  return sampleId;
}

/** A node keeps at most one sample per this many seconds, whatever its agent sends (it cannot flood the database). */
export const NODE_SAMPLE_MIN_GAP_S = 10;

/**
 * A sample a node's agent sent (its `metrics` event; `nodeId` is the node of the event's subject,
 * never a name in the message). Checked field by field as anything a node says; a sample that does
 * not parse, or comes sooner than NODE_SAMPLE_MIN_GAP_S after the node's last, is dropped.
 */
export async function recordNodeSample(db: Database, nodeId: number, body: unknown): Promise<void> {
  const parsed = machineSampleSchema.safeParse(body);
  if (!parsed.success) {
    console.error(`[metrics] node ${nodeId} sent a sample that is not one; dropped`);
    return;
  }
  await db.transaction(async (tx) => {
    // Both tables: a sample without CPU or memory still writes its services.
    const since = sql`now() - make_interval(secs => ${NODE_SAMPLE_MIN_GAP_S})`;
    const [sample] = await tx.select({ id: metricSamples.id }).from(metricSamples).where(and(eq(metricSamples.nodeId, nodeId), gt(metricSamples.takenAt, since))).limit(1);
    const [services] = await tx.select({ id: serviceSamples.id }).from(serviceSamples).where(and(eq(serviceSamples.nodeId, nodeId), gt(serviceSamples.takenAt, since))).limit(1);
    if (!sample && !services) await storeSample(tx, nodeId, parsed.data);
  });
}

export function createCollector(options: CollectorOptions = {}): Collector {
  const openDb = options.db ?? getDb;
  const log = options.log ?? ((message, error) => console.error(`[metrics] ${message}`, error ?? ""));
  const sampler = createSampler({ ...options, log });
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<TickSummary> | null = null;

  async function takeSample(): Promise<TickSummary> {
    const sample = await sampler.take();
    let sampleId: number | null = null;
    try {
      const db = await openDb();
      await db.transaction(async (tx) => {
        sampleId = await storeSample(tx, null, sample);
        const cutoff = sql`now() - make_interval(days => ${options.retentionDays ?? env().metricsRetentionDays})`;
        await tx.delete(metricSamples).where(lt(metricSamples.takenAt, cutoff));
        await tx.delete(serviceSamples).where(lt(serviceSamples.takenAt, cutoff));
      });
    } catch (error) {
      log("could not store a metrics sample:", error);
      sampleId = null;
    }
    return { sampleId, services: sample.services.length, networks: sample.networks.length, failedSources: sample.failedSources };
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
