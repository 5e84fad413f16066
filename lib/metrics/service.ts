import { and, desc, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { z } from "zod";
import { getDb, type Queryable } from "@/db/client";
import { metricSamples, serviceSamples } from "@/db/schema";
import { AppError, notFound } from "@/lib/errors";
import { hostOfNode } from "@/lib/nodes/hosts";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { findNodeByName } from "@/lib/nodes/service";
import { readSystemInfo, type SystemInfo } from "@/lib/provisioning/system-info";
import { TtlCache } from "./cache";
import {
  type clearCacheBodySchema,
  type metricsHistoryRecordSchema,
  type metricsStatsSchema,
  type serviceHistoryRecordSchema,
  systemInfoSchema,
} from "./schemas";

// The four metrics reads and the cache in front of them (SPEC: data cached for 60 seconds).
// Used alike by /api/metrics/* and the admin dashboard. Each reads the panel's own machine, or
// with `node` another node (docs/nodes.md "Metrics of a node"): its history, stats and service
// history from the samples its agent sends (stored under its id), its system information live
// from the node (an operation through its queue: a node that does not answer is a 503 naming it).
// Each read is cached per process and machine:
//   history          one entry per machine and limit
//   stats            one entry per machine
//   system info      one entry per machine
//   service history  one entry per machine and limit ("all" included)
// A failed read is not cached; it surfaces as a 500 naming what could not be read (a node that
// is unknown or does not answer keeps its 404 or 503).

export type MetricsHistoryRecord = z.infer<typeof metricsHistoryRecordSchema>;
export type ServiceHistoryRecord = z.infer<typeof serviceHistoryRecordSchema>;
export type MetricsStats = z.infer<typeof metricsStatsSchema>;
export type ClearCacheInput = z.input<typeof clearCacheBodySchema>;
export type { SystemInfo };

export const METRICS_CACHE_TTL_MS = 60_000;
export const DEFAULT_HISTORY_LIMIT = 15;
/** GET /api/metrics/stats summarises the samples of the last 24 hours. */
export const STATS_WINDOW = "24 hours";

/** A machine whose figures are read: its samples' node id (null: the panel's own) and its live system information. */
export interface MetricsMachine {
  nodeId: number | null;
  systemInfo: () => Promise<SystemInfo>;
}

export interface MetricsServiceDeps {
  db: () => Promise<Queryable>;
  /** The panel's own machine's system information. */
  systemInfo: () => Promise<SystemInfo>;
  now: () => number;
  /** Another node by name (NOT_FOUND when there is none). */
  node?: (name: string) => Promise<MetricsMachine>;
}

export interface MetricsService {
  getMetricsHistory(limit?: number, node?: string): Promise<MetricsHistoryRecord[]>;
  getMetricsStats(node?: string): Promise<MetricsStats>;
  getSystemInfo(node?: string): Promise<SystemInfo>;
  getServiceHistory(limit?: number, node?: string): Promise<ServiceHistoryRecord[]>;
  clearMetricsCache(body?: ClearCacheInput, node?: string): Promise<{ message: string }>;
}

const GIB = 1024 ** 3;

/**
 * Runs a read; any failure becomes a 500 whose message says what could not be read (why goes to
 * the log: the driver's words are no client's business). The cause is kept, so a database that
 * is away still answers 503 (lib/http/respond.ts).
 */
async function readOrFail<T>(what: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new AppError("INTERNAL", `Could not read ${what}; the panel's log says why`, undefined, { cause: error });
  }
}

/** The samples of one machine: `nodeId`'s, or the panel's own (null). */
const ofMachine = (column: typeof metricSamples.nodeId | typeof serviceSamples.nodeId, nodeId: number | null): SQL =>
  nodeId === null ? isNull(column) : eq(column, nodeId);

export async function queryMetricsHistory(db: Queryable, limit: number, nodeId: number | null = null): Promise<MetricsHistoryRecord[]> {
  const rows = await db
    .select()
    .from(metricSamples)
    .where(ofMachine(metricSamples.nodeId, nodeId))
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
}

export async function queryServiceHistory(db: Queryable, limit?: number, nodeId: number | null = null): Promise<ServiceHistoryRecord[]> {
  const query = db
    .select()
    .from(serviceSamples)
    .where(ofMachine(serviceSamples.nodeId, nodeId))
    .orderBy(desc(serviceSamples.takenAt), desc(serviceSamples.id))
    .$dynamic();
  const rows = await (limit === undefined ? query : query.limit(limit));
  return rows.map((row) => ({
    id: row.id,
    timestamp: row.takenAt.getTime(),
    service_name: row.serviceName,
    cpu_percent: row.cpuPercent,
    memory_mb: row.memoryMb,
    memory_percent: row.memoryPercent,
    process_count: row.processCount,
  }));
}

type Row = Record<string, unknown>;
const rowsOf = (result: unknown): Row[] => (Array.isArray(result) ? result : (result as { rows: Row[] }).rows);
const num = (value: unknown) => (value === null || value === undefined ? 0 : Number(value));
const int = (value: unknown) => Math.round(num(value));

/**
 * Averages, minima and maxima over the last 24 hours, computed by PostgreSQL (four aggregate
 * queries over the window's samples; nothing is loaded row by row). "current" is the newest
 * sample in the window. Network figures are per sampling interval; totals of drops and errors
 * are sums over the window. With no samples in the window, CPU and RAM figures are 0 and the
 * lists are empty.
 */
export async function computeMetricsStats(db: Queryable, nodeId: number | null = null): Promise<MetricsStats> {
  const inWindow = and(ofMachine(metricSamples.nodeId, nodeId), sql`taken_at >= now() - ${STATS_WINDOW}::interval`);
  const window = sql`SELECT id, taken_at FROM metric_samples WHERE ${inWindow}`;
  const newestFirst = sql`ORDER BY w.taken_at DESC, w.id DESC`;
  const [overall, cores, disks, networks] = await Promise.all([
    db.execute(sql`
      SELECT avg(cpu_percent)::float8 AS cpu_avg, min(cpu_percent)::float8 AS cpu_min, max(cpu_percent)::float8 AS cpu_max,
             avg(ram_percent)::float8 AS ram_avg, min(ram_percent)::float8 AS ram_min, max(ram_percent)::float8 AS ram_max
      FROM metric_samples WHERE ${inWindow}`),
    db.execute(sql`
      WITH w AS (${window})
      SELECT c.core, avg(c.percent)::float8 AS average, min(c.percent)::float8 AS minimum, max(c.percent)::float8 AS maximum,
             (array_agg(c.percent ${newestFirst}))[1]::float8 AS current
      FROM metric_cpu_core_samples c JOIN w ON w.id = c.sample_id
      GROUP BY c.core ORDER BY length(c.core), c.core`),
    db.execute(sql`
      WITH w AS (${window})
      SELECT d.device, d.mounted_on,
             avg(d.used_percent)::float8 AS average, min(d.used_percent)::float8 AS minimum, max(d.used_percent)::float8 AS maximum,
             avg(d.used_bytes)::float8 AS avg_used, max(d.used_bytes)::float8 AS max_used,
             (array_agg(d.used_bytes ${newestFirst}))[1]::float8 AS current_used,
             (array_agg(d.available_bytes ${newestFirst}))[1]::float8 AS current_free,
             (array_agg(d.size_bytes ${newestFirst}))[1]::float8 AS current_total,
             (array_agg(d.used_percent ${newestFirst}))[1]::float8 AS current_percent
      FROM metric_disk_samples d JOIN w ON w.id = d.sample_id
      GROUP BY d.device, d.mounted_on ORDER BY d.mounted_on, d.device`),
    db.execute(sql`
      WITH w AS (${window})
      SELECT n.interface,
             avg(n.rx_bytes)::float8 AS avg_rx_bytes, avg(n.rx_packets)::float8 AS avg_rx_packets,
             avg(n.tx_bytes)::float8 AS avg_tx_bytes, avg(n.tx_packets)::float8 AS avg_tx_packets,
             (array_agg(n.rx_bytes ${newestFirst}))[1]::float8 AS current_rx_bytes,
             (array_agg(n.rx_packets ${newestFirst}))[1]::float8 AS current_rx_packets,
             (array_agg(n.tx_bytes ${newestFirst}))[1]::float8 AS current_tx_bytes,
             (array_agg(n.tx_packets ${newestFirst}))[1]::float8 AS current_tx_packets,
             max(n.rx_bytes)::float8 AS max_rx_bytes, max(n.rx_packets)::float8 AS max_rx_packets,
             max(n.tx_bytes)::float8 AS max_tx_bytes, max(n.tx_packets)::float8 AS max_tx_packets,
             sum(n.rx_drops)::float8 AS total_rx_drops, sum(n.rx_errors)::float8 AS total_rx_errors,
             sum(n.tx_drops)::float8 AS total_tx_drops, sum(n.tx_errors)::float8 AS total_tx_errors
      FROM metric_network_samples n JOIN w ON w.id = n.sample_id
      GROUP BY n.interface ORDER BY n.interface`),
  ]);

  const [o] = rowsOf(overall);
  return {
    cpu: { average: num(o?.cpu_avg), minimum: num(o?.cpu_min), maximum: num(o?.cpu_max) },
    cpu_cores: rowsOf(cores).map((row) => ({
      core: String(row.core),
      current: num(row.current),
      average: num(row.average),
      minimum: num(row.minimum),
      maximum: num(row.maximum),
    })),
    ram: { average: num(o?.ram_avg), minimum: num(o?.ram_min), maximum: num(o?.ram_max) },
    disks: rowsOf(disks).map((row) => ({
      device: String(row.device),
      mounted_on: String(row.mounted_on),
      average: num(row.average),
      minimum: int(row.minimum),
      maximum: int(row.maximum),
      avg_used_gb: num(row.avg_used) / GIB,
      max_used_gb: int(num(row.max_used) / GIB),
      current_used_gb: int(num(row.current_used) / GIB),
      current_free_gb: int(num(row.current_free) / GIB),
      current_total_gb: int(num(row.current_total) / GIB),
      current_used_percentage: int(row.current_percent),
    })),
    networks: rowsOf(networks).map((row) => ({
      interface: String(row.interface),
      avg_rx_bytes: num(row.avg_rx_bytes),
      avg_rx_packets: num(row.avg_rx_packets),
      avg_tx_bytes: num(row.avg_tx_bytes),
      avg_tx_packets: num(row.avg_tx_packets),
      current_rx_bytes: int(row.current_rx_bytes),
      current_rx_packets: int(row.current_rx_packets),
      current_tx_bytes: int(row.current_tx_bytes),
      current_tx_packets: int(row.current_tx_packets),
      max_rx_bytes: int(row.max_rx_bytes),
      max_rx_packets: int(row.max_rx_packets),
      max_tx_bytes: int(row.max_tx_bytes),
      max_tx_packets: int(row.max_tx_packets),
      total_rx_drops: int(row.total_rx_drops),
      total_rx_errors: int(row.total_rx_errors),
      total_tx_drops: int(row.total_tx_drops),
      total_tx_errors: int(row.total_tx_errors),
    })),
  };
}

/** The dashboard's ranges, in seconds. */
export const METRICS_RANGES = { "1h": 3600, "24h": 86_400, "7d": 7 * 86_400, "30d": 30 * 86_400 } as const;
export type MetricsRange = keyof typeof METRICS_RANGES;
export const isMetricsRange = (value: unknown): value is MetricsRange => typeof value === "string" && Object.hasOwn(METRICS_RANGES, value);

/** About this many points per chart, whatever the range. */
const POINTS_PER_RANGE = 120;

export interface MetricsOverRange {
  range: MetricsRange;
  /** The collector's sampling interval, and how many seconds each point averages (never less). */
  interval_s: number;
  bucket_s: number;
  points: { timestamp: number; cpu_percent: number; ram_percent: number }[];
  /** All interfaces but loopback together, as rates: bits per second received and sent. */
  network: { timestamp: number; rx_bps: number; tx_bps: number }[];
}

/**
 * A machine's CPU, RAM and network over `range`, averaged into buckets of at least one sampling
 * interval (about 120 points: a 30-day range is not 43,200 points in the browser). A network
 * sample holds the bytes of one interval, so its rate is bytes × 8 / interval.
 */
export async function queryMetricsOverRange(db: Queryable, range: MetricsRange, intervalS: number, nodeId: number | null = null): Promise<MetricsOverRange> {
  const rangeS = METRICS_RANGES[range];
  const bucketS = Math.max(intervalS, Math.ceil(rangeS / POINTS_PER_RANGE));
  const inRange = and(ofMachine(metricSamples.nodeId, nodeId), sql`taken_at >= now() - make_interval(secs => ${rangeS})`);
  const bucket = (column: SQL) => sql`(floor(extract(epoch from ${column}) / ${bucketS}) * ${bucketS})::float8`;
  const [points, network] = await Promise.all([
    db.execute(sql`
      SELECT ${bucket(sql`taken_at`)} AS bucket, avg(cpu_percent)::float8 AS cpu, avg(ram_percent)::float8 AS ram
      FROM metric_samples WHERE ${inRange} GROUP BY 1 ORDER BY 1`),
    db.execute(sql`
      WITH per_sample AS (
        SELECT metric_samples.taken_at, sum(n.rx_bytes)::float8 AS rx, sum(n.tx_bytes)::float8 AS tx
        FROM metric_samples JOIN metric_network_samples n ON n.sample_id = metric_samples.id
        WHERE ${inRange} AND n.interface <> 'lo'
        GROUP BY metric_samples.id, metric_samples.taken_at)
      SELECT ${bucket(sql`taken_at`)} AS bucket, avg(rx)::float8 AS rx, avg(tx)::float8 AS tx FROM per_sample GROUP BY 1 ORDER BY 1`),
  ]);
  return {
    range,
    interval_s: intervalS,
    bucket_s: bucketS,
    points: rowsOf(points).map((row) => ({ timestamp: num(row.bucket) * 1000, cpu_percent: num(row.cpu), ram_percent: num(row.ram) })),
    network: rowsOf(network).map((row) => ({
      timestamp: num(row.bucket) * 1000,
      rx_bps: (num(row.rx) * 8) / intervalS,
      tx_bps: (num(row.tx) * 8) / intervalS,
    })),
  };
}

/** A metrics service over the given sources, with its own caches (tests build their own). */
export function createMetricsService(deps: MetricsServiceDeps): MetricsService {
  // Keyed by machine ("" the panel's own, "#<id>" a node) and, for the lists, limit.
  const history = new TtlCache<string, MetricsHistoryRecord[]>(METRICS_CACHE_TTL_MS, 256, deps.now);
  const stats = new TtlCache<string, MetricsStats>(METRICS_CACHE_TTL_MS, 64, deps.now);
  const systemInfo = new TtlCache<string, SystemInfo>(METRICS_CACHE_TTL_MS, 64, deps.now);
  const serviceHistory = new TtlCache<string, ServiceHistoryRecord[]>(METRICS_CACHE_TTL_MS, 64, deps.now);

  const panelMachine: MetricsMachine = { nodeId: null, systemInfo: deps.systemInfo };
  /** The machine `node` names: the panel's own without one (or `local`). */
  const machineOf = async (node?: string): Promise<MetricsMachine & { key: string }> => {
    const machine = node === undefined || node === LOCAL_NODE ? panelMachine : await (deps.node ?? noOtherNodes)(node);
    return { ...machine, key: machine.nodeId === null ? "" : `#${machine.nodeId}` };
  };

  return {
    async getMetricsHistory(limit = DEFAULT_HISTORY_LIMIT, node) {
      const { key, nodeId } = await machineOf(node);
      return history.get(`${key} ${limit}`, () => readOrFail("metrics history", async () => queryMetricsHistory(await deps.db(), limit, nodeId)));
    },
    async getMetricsStats(node) {
      const { key, nodeId } = await machineOf(node);
      return stats.get(key, () => readOrFail("metrics stats", async () => computeMetricsStats(await deps.db(), nodeId)));
    },
    async getSystemInfo(node) {
      const machine = await machineOf(node);
      return systemInfo.get(machine.key, () => readOrFail("system info", machine.systemInfo));
    },
    async getServiceHistory(limit, node) {
      const { key, nodeId } = await machineOf(node);
      return serviceHistory.get(`${key} ${limit ?? "all"}`, () =>
        readOrFail("service history", async () => queryServiceHistory(await deps.db(), limit, nodeId)),
      );
    },
    async clearMetricsCache(body = {}, node) {
      const { key } = await machineOf(node);
      const limit = body.limit ?? DEFAULT_HISTORY_LIMIT;
      history.delete(`${key} ${limit}`);
      const cleared = [`metrics history (limit ${limit})`];
      if (body.clear_stats) {
        stats.delete(key);
        cleared.push("stats");
      }
      if (body.clear_system_info) {
        systemInfo.delete(key);
        cleared.push("system info");
      }
      if (body.clear_service_history) {
        serviceHistory.deleteMatching((entry) => entry.startsWith(`${key} `));
        cleared.push("service history (every limit)");
      }
      const list = cleared.length > 1 ? `${cleared.slice(0, -1).join(", ")} and ${cleared.at(-1)}` : cleared[0];
      return { message: `Cleared the cache of ${list}${node === undefined ? "" : ` of node ${node}`}` };
    },
  };
}

const noOtherNodes = async (): Promise<MetricsMachine> => {
  throw notFound("Node");
};

/** A node of the panel's database: its stored samples, its system information read on it (parsed: a node's answer is checked). */
async function nodeMachine(name: string): Promise<MetricsMachine> {
  const row = await findNodeByName(await getDb(), name);
  if (!row) throw notFound("Node");
  return { nodeId: row.id, systemInfo: async () => systemInfoSchema.parse(await hostOfNode(row).run("metrics.system-info", null)) };
}

// The process's service: on globalThis because each route file is its own module instance and
// POST /api/metrics/clear-cache must clear the caches the GET routes read.
const globalForMetrics = globalThis as unknown as { __panelMetricsService?: MetricsService };
const defaultService = () =>
  (globalForMetrics.__panelMetricsService ??= createMetricsService({ db: getDb, systemInfo: readSystemInfo, now: Date.now, node: nodeMachine }));

export const getMetricsHistory = (limit?: number, node?: string) => defaultService().getMetricsHistory(limit, node);
export const getMetricsStats = (node?: string) => defaultService().getMetricsStats(node);
export const getSystemInfo = (node?: string) => defaultService().getSystemInfo(node);
export const getServiceHistory = (limit?: number, node?: string) => defaultService().getServiceHistory(limit, node);
export const clearMetricsCache = (body?: ClearCacheInput, node?: string) => defaultService().clearMetricsCache(body, node);
