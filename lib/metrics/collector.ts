import fs from "node:fs/promises";
import { lt } from "drizzle-orm";
import si from "systeminformation";
import type { Database } from "@/db/client";
import {
  metricCpuCoreSamples,
  metricDiskSamples,
  metricNetworkSamples,
  metricSamples,
  serviceSamples,
} from "@/db/schema";

// The metrics collector: one per server process (started from instrumentation.ts), sampling
// every METRICS_INTERVAL_S with systeminformation. Each source (CPU, memory, disks, networks,
// processes) is read on its own; one that fails is logged and left out of that sample, and the
// collector carries on. Samples older than METRICS_RETENTION_DAYS are pruned on every tick.
//
// Network counters are stored per interval: the difference since the previous reading. The
// collector reads a baseline when it starts and takes its first sample a second later, so a
// fresh install has data at once (that first interval is one second long).
//
// Services group processes by executable name:
//   web server       nginx, apache2, httpd, caddy, lighttpd
//   database server  mariadbd, mysqld, postgres
//   PHP-FPM          php-fpm*
//   cache server     redis-server, memcached
//   hosting panel    this process and its children
// A service is recorded when at least one of its processes runs.

const MB = 1024 * 1024;

const SERVICES: { name: string; matches: (process: { name: string }) => boolean }[] = [
  { name: "web server", matches: ({ name }) => /^(nginx|apache2|httpd|caddy|lighttpd)$/.test(name) },
  { name: "database server", matches: ({ name }) => /^(mariadbd|mysqld|postgres)$/.test(name) },
  { name: "PHP-FPM", matches: ({ name }) => /^php-fpm/.test(name) },
  { name: "cache server", matches: ({ name }) => /^(redis-server|memcached)$/.test(name) },
];
const PANEL_SERVICE = "hosting panel";

interface NetworkCounters {
  rxBytes: number;
  rxPackets: number;
  txBytes: number;
  txPackets: number;
  rxDrops: number;
  rxErrors: number;
  txDrops: number;
  txErrors: number;
}

async function readPackets(iface: string, direction: "rx" | "tx"): Promise<number> {
  try {
    return Number(await fs.readFile(`/sys/class/net/${iface}/statistics/${direction}_packets`, "utf8")) || 0;
  } catch {
    return 0; // not Linux, or the interface went away
  }
}

async function readNetworkCounters(): Promise<Map<string, NetworkCounters>> {
  const stats = await si.networkStats("*");
  const counters = new Map<string, NetworkCounters>();
  for (const stat of stats) {
    counters.set(stat.iface, {
      rxBytes: stat.rx_bytes,
      rxPackets: await readPackets(stat.iface, "rx"),
      txBytes: stat.tx_bytes,
      txPackets: await readPackets(stat.iface, "tx"),
      rxDrops: stat.rx_dropped,
      rxErrors: stat.rx_errors,
      txDrops: stat.tx_dropped,
      txErrors: stat.tx_errors,
    });
  }
  return counters;
}

/** Where the collector reads the machine; tests replace parts of it to make a source fail. */
export const systemSources = {
  load: () => si.currentLoad(),
  memory: () => si.mem(),
  filesystems: () => si.fsSize(),
  networks: readNetworkCounters,
  processes: () => si.processes(),
};

async function attempt<T>(source: string, read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    console.error(`[metrics] could not read ${source}; left out of this sample:`, error);
    return null;
  }
}

const difference = (now: number, before: number | undefined) => Math.max(0, now - (before ?? now));

interface CollectorState {
  timer?: NodeJS.Timeout;
  previousNetwork?: Map<string, NetworkCounters>;
  running?: Promise<void>;
}

const globalForCollector = globalThis as unknown as { __panelMetricsCollector?: CollectorState };
const state: CollectorState = (globalForCollector.__panelMetricsCollector ??= {});

/** Takes one sample and stores it; prunes old samples. Never throws. */
export async function collectSample(db: Database, retentionDays: number): Promise<void> {
  const [load, memory, filesystems, network, processes] = await Promise.all([
    attempt("CPU load", systemSources.load),
    attempt("memory", systemSources.memory),
    attempt("filesystems", systemSources.filesystems),
    attempt("network interfaces", systemSources.networks),
    attempt("processes", systemSources.processes),
  ]);
  try {
    await db.transaction(async (tx) => {
      if (load && memory) {
        const used = memory.total - memory.available;
        const [sample] = await tx
          .insert(metricSamples)
          .values({
            cpuPercent: load.currentLoad,
            ramPercent: memory.total ? (used / memory.total) * 100 : 0,
            ramTotalMb: memory.total / MB,
            ramUsedMb: used / MB,
            ramFreeMb: memory.available / MB,
          })
          .returning({ id: metricSamples.id });
        if (load.cpus.length) {
          await tx
            .insert(metricCpuCoreSamples)
            .values(load.cpus.map((cpu, index) => ({ sampleId: sample.id, core: `cpu${index}`, percent: cpu.load })));
        }
        const mounts = new Map((filesystems ?? []).map((fs) => [fs.mount, fs]));
        if (mounts.size) {
          await tx.insert(metricDiskSamples).values(
            [...mounts.values()].map((fs) => ({
              sampleId: sample.id,
              device: fs.fs,
              mountedOn: fs.mount,
              usedBytes: Math.round(fs.used),
              sizeBytes: Math.round(fs.size),
              usedPercent: fs.use ?? (fs.size ? (fs.used / fs.size) * 100 : 0),
            })),
          );
        }
        if (network && state.previousNetwork) {
          const before = state.previousNetwork;
          const rows = [...network].map(([iface, now]) => {
            const previous = before.get(iface);
            return {
              sampleId: sample.id,
              interface: iface,
              rxBytes: difference(now.rxBytes, previous?.rxBytes),
              rxPackets: difference(now.rxPackets, previous?.rxPackets),
              txBytes: difference(now.txBytes, previous?.txBytes),
              txPackets: difference(now.txPackets, previous?.txPackets),
              rxDrops: difference(now.rxDrops, previous?.rxDrops),
              rxErrors: difference(now.rxErrors, previous?.rxErrors),
              txDrops: difference(now.txDrops, previous?.txDrops),
              txErrors: difference(now.txErrors, previous?.txErrors),
            };
          });
          if (rows.length) await tx.insert(metricNetworkSamples).values(rows);
        }
      }
      if (processes && memory) {
        const groups = new Map<string, { cpu: number; memBytes: number; memPercent: number; count: number }>();
        for (const proc of processes.list) {
          const isPanel = proc.pid === process.pid || proc.parentPid === process.pid;
          const service = isPanel ? PANEL_SERVICE : SERVICES.find((candidate) => candidate.matches(proc))?.name;
          if (!service) continue;
          const group = groups.get(service) ?? { cpu: 0, memBytes: 0, memPercent: 0, count: 0 };
          group.cpu += proc.cpu;
          group.memBytes += proc.memRss * 1024;
          group.memPercent += proc.mem;
          group.count += 1;
          groups.set(service, group);
        }
        if (groups.size) {
          await tx.insert(serviceSamples).values(
            [...groups].map(([serviceName, group]) => ({
              serviceName,
              cpuPercent: group.cpu,
              memoryMb: group.memBytes / MB,
              memoryPercent: group.memPercent,
              processCount: group.count,
            })),
          );
        }
      }
      const cutoff = new Date(Date.now() - retentionDays * 24 * 60 * 60 * 1000);
      await tx.delete(metricSamples).where(lt(metricSamples.takenAt, cutoff));
      await tx.delete(serviceSamples).where(lt(serviceSamples.takenAt, cutoff));
    });
  } catch (error) {
    console.error("[metrics] could not store a sample:", error);
  }
  if (network) state.previousNetwork = network;
}

/** Starts sampling (once per process): a baseline now, the first sample a second later. */
export function startCollector(db: Database, options: { intervalS: number; retentionDays: number }): void {
  if (state.timer) return;
  const tick = () => {
    state.running = collectSample(db, options.retentionDays);
  };
  state.timer = setTimeout(async function first() {
    tick();
    state.timer = setInterval(tick, options.intervalS * 1000);
    state.timer.unref();
  }, 1000);
  state.timer.unref();
  void attempt("network interfaces", systemSources.networks).then((baseline) => {
    if (baseline) state.previousNetwork ??= baseline;
  });
  void systemSources.load().catch(() => {}); // CPU load is measured since the previous call
}

export async function stopCollector(): Promise<void> {
  clearTimeout(state.timer);
  clearInterval(state.timer);
  state.timer = undefined;
  await state.running;
}
