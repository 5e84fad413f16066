import os from "node:os";
import fs from "node:fs/promises";
import { and, desc, eq, gte, max, type SQL, sql } from "drizzle-orm";
import si from "systeminformation";
import type { z } from "zod";
import { getDb, type Queryable } from "@/db/client";
import {
  metricCpuCoreSamples,
  metricDiskSamples,
  metricNetworkSamples,
  metricSamples,
  serviceSamples,
} from "@/db/schema";
import { AppError } from "@/lib/errors";
import type {
  clearCacheBodySchema,
  metricsHistoryRecordSchema,
  metricsStatsSchema,
  serviceHistoryRecordSchema,
  systemInfoSchema,
} from "./schemas";

// The four metrics reads, each cached for 60 s (SPEC.md), and the cache control. Statistics
// cover the last 24 hours of samples and are computed in SQL.

export type MetricsHistoryRecord = z.infer<typeof metricsHistoryRecordSchema>;
export type ServiceHistoryRecord = z.infer<typeof serviceHistoryRecordSchema>;
export type MetricsStats = z.infer<typeof metricsStatsSchema>;
export type SystemInfo = z.infer<typeof systemInfoSchema>;

export const CACHE_TTL_MS = 60_000;
export const DEFAULT_HISTORY_LIMIT = 15;
export const STATS_WINDOW_HOURS = 24;
const MAX_CACHE_ENTRIES = 256;
const GB = 1024 ** 3;

interface CacheEntry {
  value: unknown;
  expiresAt: number;
}
const globalForCache = globalThis as unknown as { __panelMetricsCache?: Map<string, CacheEntry> };
const cache = (globalForCache.__panelMetricsCache ??= new Map());

async function cached<T>(key: string, what: string, compute: () => Promise<T>): Promise<T> {
  const hit = cache.get(key);
  if (hit && hit.expiresAt > Date.now()) return hit.value as T;
  let value: T;
  try {
    value = await compute();
  } catch (error) {
    throw new AppError("INTERNAL", `Could not read ${what}: ${(error as Error).message}`, undefined, { cause: error });
  }
  if (cache.size >= MAX_CACHE_ENTRIES) cache.clear();
  cache.set(key, { value, expiresAt: Date.now() + CACHE_TTL_MS });
  return value;
}

const float = (expression: SQL) => sql<number>`coalesce((${expression})::float8, 0)`.mapWith(Number);

export function getMetricsHistory(limit = DEFAULT_HISTORY_LIMIT, db?: Queryable): Promise<MetricsHistoryRecord[]> {
  return cached(`history:${limit}`, "metrics history", async () => {
    const rows = await (db ?? (await getDb()))
      .select()
      .from(metricSamples)
      .orderBy(desc(metricSamples.takenAt), desc(metricSamples.id))
      .limit(limit);
    return rows.map((row) => ({
      id: row.id,
      timestamp: row.takenAt.getTime(),
      cpu_percent: row.cpuPercent,
      ram_percent: row.ramPercent,
      ram_total_mb: row.ramTotalMb,
      ram_used_mb: row.ramUsedMb,
      ram_free_mb: row.ramFreeMb,
    }));
  });
}

export function getServiceHistory(limit?: number, db?: Queryable): Promise<ServiceHistoryRecord[]> {
  return cached(`service-history:${limit ?? "all"}`, "service history", async () => {
    const query = (db ?? (await getDb()))
      .select()
      .from(serviceSamples)
      .orderBy(desc(serviceSamples.takenAt), desc(serviceSamples.id));
    const rows = limit === undefined ? await query : await query.limit(limit);
    return rows.map((row) => ({
      id: row.id,
      timestamp: row.takenAt.getTime(),
      service_name: row.serviceName,
      cpu_percent: row.cpuPercent,
      memory_mb: row.memoryMb,
      memory_percent: row.memoryPercent,
      process_count: row.processCount,
    }));
  });
}

/** The newest sample in the window that has rows in `table` (the "current" values). */
async function latestSampleWith(db: Queryable, table: typeof metricCpuCoreSamples | typeof metricDiskSamples | typeof metricNetworkSamples, since: Date) {
  const [row] = await db
    .select({ id: max(table.sampleId) })
    .from(table)
    .innerJoin(metricSamples, eq(metricSamples.id, table.sampleId))
    .where(gte(metricSamples.takenAt, since));
  return row?.id ?? null;
}

export async function computeMetricsStats(db: Queryable, now = new Date()): Promise<MetricsStats> {
  const since = new Date(now.getTime() - STATS_WINDOW_HOURS * 60 * 60 * 1000);
  const inWindow = gte(metricSamples.takenAt, since);

  const [overall] = await db
    .select({
      cpuAvg: float(sql`avg(${metricSamples.cpuPercent})`),
      cpuMin: float(sql`min(${metricSamples.cpuPercent})`),
      cpuMax: float(sql`max(${metricSamples.cpuPercent})`),
      ramAvg: float(sql`avg(${metricSamples.ramPercent})`),
      ramMin: float(sql`min(${metricSamples.ramPercent})`),
      ramMax: float(sql`max(${metricSamples.ramPercent})`),
    })
    .from(metricSamples)
    .where(inWindow);

  const core = metricCpuCoreSamples;
  const latestCore = await latestSampleWith(db, core, since);
  const cores = await db
    .select({
      core: core.core,
      average: float(sql`avg(${core.percent})`),
      minimum: float(sql`min(${core.percent})`),
      maximum: float(sql`max(${core.percent})`),
      current: float(sql`max(${core.percent}) filter (where ${core.sampleId} = ${latestCore ?? 0})`),
    })
    .from(core)
    .innerJoin(metricSamples, eq(metricSamples.id, core.sampleId))
    .where(inWindow)
    .groupBy(core.core)
    .orderBy(sql`length(${core.core})`, core.core);

  const disk = metricDiskSamples;
  const latestDisk = await latestSampleWith(db, disk, since);
  const atLatestDisk = (column: SQL | typeof disk.usedBytes) => float(sql`max(${column}) filter (where ${disk.sampleId} = ${latestDisk ?? 0})`);
  const disks = await db
    .select({
      device: disk.device,
      mountedOn: disk.mountedOn,
      average: float(sql`avg(${disk.usedPercent})`),
      minimum: float(sql`min(${disk.usedPercent})`),
      maximum: float(sql`max(${disk.usedPercent})`),
      avgUsed: float(sql`avg(${disk.usedBytes})`),
      maxUsed: float(sql`max(${disk.usedBytes})`),
      currentUsed: atLatestDisk(disk.usedBytes),
      currentSize: atLatestDisk(sql`${disk.sizeBytes}`),
      currentPercent: atLatestDisk(sql`${disk.usedPercent}`),
    })
    .from(disk)
    .innerJoin(metricSamples, eq(metricSamples.id, disk.sampleId))
    .where(inWindow)
    .groupBy(disk.device, disk.mountedOn)
    .orderBy(disk.mountedOn);

  const net = metricNetworkSamples;
  const latestNet = await latestSampleWith(db, net, since);
  const counters = ["rxBytes", "rxPackets", "txBytes", "txPackets"] as const;
  const networkColumns = Object.fromEntries(
    counters.flatMap((counter) => [
      [`avg_${counter}`, float(sql`avg(${net[counter]})`)],
      [`max_${counter}`, float(sql`max(${net[counter]})`)],
      [`current_${counter}`, float(sql`max(${net[counter]}) filter (where ${net.sampleId} = ${latestNet ?? 0})`)],
    ]),
  ) as Record<`${"avg" | "max" | "current"}_${(typeof counters)[number]}`, SQL.Aliased<number> | ReturnType<typeof float>>;
  const networks = await db
    .select({
      interface: net.interface,
      ...networkColumns,
      rxDrops: float(sql`sum(${net.rxDrops})`),
      rxErrors: float(sql`sum(${net.rxErrors})`),
      txDrops: float(sql`sum(${net.txDrops})`),
      txErrors: float(sql`sum(${net.txErrors})`),
    })
    .from(net)
    .innerJoin(metricSamples, eq(metricSamples.id, net.sampleId))
    .where(and(inWindow))
    .groupBy(net.interface)
    .orderBy(net.interface);

  const int = (value: number) => Math.round(value);
  return {
    cpu: { average: overall.cpuAvg, minimum: overall.cpuMin, maximum: overall.cpuMax },
    cpu_cores: cores,
    ram: { average: overall.ramAvg, minimum: overall.ramMin, maximum: overall.ramMax },
    disks: disks.map((row) => ({
      device: row.device,
      mounted_on: row.mountedOn,
      average: row.average,
      minimum: int(row.minimum),
      maximum: int(row.maximum),
      avg_used_gb: row.avgUsed / GB,
      max_used_gb: int(row.maxUsed / GB),
      current_used_gb: int(row.currentUsed / GB),
      current_free_gb: int((row.currentSize - row.currentUsed) / GB),
      current_total_gb: int(row.currentSize / GB),
      current_used_percentage: int(row.currentPercent),
    })),
    networks: networks.map((row) => {
      const value = (key: string) => Number((row as Record<string, unknown>)[key]);
      return {
        interface: row.interface,
        avg_rx_bytes: value("avg_rxBytes"),
        avg_rx_packets: value("avg_rxPackets"),
        avg_tx_bytes: value("avg_txBytes"),
        avg_tx_packets: value("avg_txPackets"),
        current_rx_bytes: int(value("current_rxBytes")),
        current_rx_packets: int(value("current_rxPackets")),
        current_tx_bytes: int(value("current_txBytes")),
        current_tx_packets: int(value("current_txPackets")),
        max_rx_bytes: int(value("max_rxBytes")),
        max_rx_packets: int(value("max_rxPackets")),
        max_tx_bytes: int(value("max_txBytes")),
        max_tx_packets: int(value("max_txPackets")),
        total_rx_drops: int(row.rxDrops),
        total_rx_errors: int(row.rxErrors),
        total_tx_drops: int(row.txDrops),
        total_tx_errors: int(row.txErrors),
      };
    }),
  };
}

export function getMetricsStats(db?: Queryable): Promise<MetricsStats> {
  return cached("stats", "metrics statistics", async () => computeMetricsStats(db ?? (await getDb())));
}

function formatUptime(seconds: number): string {
  const days = Math.floor(seconds / 86400);
  const hours = Math.floor((seconds % 86400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  return `${days}d ${hours}h ${minutes}m`;
}

async function distroId(fallback: string): Promise<string> {
  try {
    const release = await fs.readFile("/etc/os-release", "utf8");
    return /^ID="?([^"\n]+)"?$/m.exec(release)?.[1] ?? fallback;
  } catch {
    return fallback;
  }
}

/** Live system information; `sources` lets tests make a source fail. */
export async function readSystemInfo(sources = { osInfo: () => si.osInfo(), cpu: () => si.cpu(), mem: () => si.mem() }): Promise<SystemInfo> {
  const [osInfo, cpu, memory] = await Promise.all([sources.osInfo(), sources.cpu(), sources.mem()]);
  const used = memory.total - memory.available;
  const gb = (bytes: number) => (bytes / GB).toFixed(2);
  const uptime = Math.floor(os.uptime());
  return {
    arch: os.arch(),
    cpu: { cores: cpu.cores, model: `${cpu.manufacturer} ${cpu.brand}`.trim(), speed: Math.round(cpu.speed * 1000) },
    distro: { id: await distroId(osInfo.distro.toLowerCase()), name: osInfo.distro, version: osInfo.release },
    hostname: os.hostname(),
    kernelVersion: osInfo.kernel,
    release: os.release(),
    platform: os.platform(),
    nodeVersion: `Node.js ${process.version}`,
    memory: {
      free: memory.available,
      total: memory.total,
      used,
      freeGB: gb(memory.available),
      totalGB: gb(memory.total),
      usedGB: gb(used),
      percent: ((used / memory.total) * 100).toFixed(2),
    },
    networkInterfaces: Object.entries(os.networkInterfaces()).map(([name, addresses]) => ({
      name,
      addresses: (addresses ?? []).map((address) => ({
        address: address.address,
        family: address.family,
        internal: address.internal,
        mac: address.mac,
        netmask: address.netmask,
      })),
    })),
    uptime: { seconds: uptime, formatted: formatUptime(uptime) },
  };
}

export function getSystemInfo(): Promise<SystemInfo> {
  return cached("system-info", "system information", () => readSystemInfo());
}

/** POST /api/metrics/clear-cache: clears exactly what the body names. */
export function clearMetricsCache(body: z.output<typeof clearCacheBodySchema> | undefined): { message: string } {
  const cleared: string[] = [];
  const limit = body?.limit ?? DEFAULT_HISTORY_LIMIT;
  cache.delete(`history:${limit}`);
  cleared.push(`history (limit ${limit})`);
  if (body?.clear_stats) {
    cache.delete("stats");
    cleared.push("stats");
  }
  if (body?.clear_system_info) {
    cache.delete("system-info");
    cleared.push("system info");
  }
  if (body?.clear_service_history) {
    for (const key of cache.keys()) if (key.startsWith("service-history:")) cache.delete(key);
    cleared.push("service history");
  }
  return { message: `Cache cleared: ${cleared.join(", ")}` };
}
