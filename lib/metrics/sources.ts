import fs from "node:fs/promises";
import si from "systeminformation";

// What the collector reads from the machine, one function per source so that each can fail
// alone (and so tests and the bench can substitute them). The real readings come from
// systeminformation; network counters come from /proc/net/dev because systeminformation's
// networkStats() has no packet counts.

export interface CpuReading {
  /** Busy percentage of all cores since the previous reading. */
  percent: number;
  /** Busy percentage per core, in core order. */
  cores: number[];
}

export interface MemoryReading {
  totalBytes: number;
  /** Memory available to new work (MemAvailable): free plus reclaimable cache. */
  availableBytes: number;
}

export interface FilesystemReading {
  device: string;
  mountedOn: string;
  sizeBytes: number;
  usedBytes: number;
  /** Space an unprivileged user can still write (df's "Avail"; less than size − used). */
  availableBytes: number;
  usedPercent: number;
}

/** Cumulative counters since the interface came up. */
export interface NetworkCounters {
  interface: string;
  rxBytes: number;
  rxPackets: number;
  rxDrops: number;
  rxErrors: number;
  txBytes: number;
  txPackets: number;
  txDrops: number;
  txErrors: number;
}

export interface ProcessReading {
  pid: number;
  parentPid: number;
  name: string;
  /** CPU percentage (of one core's worth × cores, as `ps`/systeminformation report it). */
  cpuPercent: number;
  memoryPercent: number;
  rssBytes: number;
}

export interface MetricsSources {
  cpu(): Promise<CpuReading>;
  memory(): Promise<MemoryReading>;
  filesystems(): Promise<FilesystemReading[]>;
  networkCounters(): Promise<NetworkCounters[]>;
  processes(): Promise<ProcessReading[]>;
}

/** /proc/net/dev: "iface: rx_bytes rx_packets rx_errs rx_drop … tx_bytes tx_packets tx_errs tx_drop …". */
export function parseProcNetDev(text: string): NetworkCounters[] {
  const counters: NetworkCounters[] = [];
  for (const line of text.split("\n").slice(2)) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const f = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (f.length < 16 || f.some((value) => !Number.isFinite(value))) continue;
    counters.push({
      interface: name,
      rxBytes: f[0],
      rxPackets: f[1],
      rxErrors: f[2],
      rxDrops: f[3],
      txBytes: f[8],
      txPackets: f[9],
      txErrors: f[10],
      txDrops: f[11],
    });
  }
  return counters;
}

export const systemSources: MetricsSources = {
  async cpu() {
    const load = await si.currentLoad();
    return { percent: load.currentLoad, cores: load.cpus.map((core) => core.load) };
  },
  async memory() {
    const mem = await si.mem();
    return { totalBytes: mem.total, availableBytes: mem.available };
  },
  async filesystems() {
    const list = await si.fsSize();
    return list
      .filter((fsEntry) => fsEntry.size > 0)
      .map((fsEntry) => ({
        device: fsEntry.fs,
        mountedOn: fsEntry.mount,
        sizeBytes: fsEntry.size,
        usedBytes: fsEntry.used,
        availableBytes: fsEntry.available,
        usedPercent: fsEntry.use,
      }));
  },
  async networkCounters() {
    if (process.platform !== "linux") throw new Error("network counters are read from /proc/net/dev (Linux only)");
    return parseProcNetDev(await fs.readFile("/proc/net/dev", "utf8"));
  },
  async processes() {
    const { list } = await si.processes();
    return list.map((p) => ({
      pid: p.pid,
      parentPid: p.parentPid,
      name: p.name,
      cpuPercent: p.cpu,
      memoryPercent: p.mem,
      rssBytes: p.memRss * 1024,
    }));
  },
};
