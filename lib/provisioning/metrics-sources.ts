import fs from "node:fs";
import os from "node:os";
import si from "systeminformation";

// What a metrics sample reads from the machine (lib/provisioning/metrics-sample.ts: the panel's
// collector, a node's agent), one function per source so that each can fail alone (and so tests
// and the bench can substitute them). The real readings come from systeminformation, except two
// read from /proc: network counters (systeminformation's networkStats() has no packet counts) and
// processes (its processes() runs `ps` and then one `cat` per process, every tick: ~90 programs
// started, ~350–580 ms of CPU on a quiet server).

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
  /** Share of all cores' time since the previous reading, in percent: 100 is the whole machine. */
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
    return parseProcNetDev(fs.readFileSync("/proc/net/dev", "utf8"));
  },
  processes: createProcessReader(),
};

/** Sum of the jiffies of all cores in all states: the first line of /proc/stat. */
export function parseTotalJiffies(procStat: string): number {
  const cpuLine = procStat.slice(0, procStat.indexOf("\n"));
  return cpuLine
    .split(/\s+/)
    .slice(1)
    .reduce((sum, field) => sum + (Number(field) || 0), 0);
}

/** /proc/PID/stat: "pid (comm) state ppid … utime stime …", comm may hold spaces and parentheses. */
export function parseProcessStat(text: string): { pid: number; name: string; parentPid: number; cpuJiffies: number } | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const fields = text.slice(close + 2).split(" ");
  // After the comm: state (0), ppid (1), … utime (11), stime (12).
  const [pid, parentPid, utime, stime] = [Number(text.slice(0, open)), Number(fields[1]), Number(fields[11]), Number(fields[12])];
  if (![pid, parentPid, utime, stime].every(Number.isFinite)) return null;
  return { pid, name: text.slice(open + 1, close), parentPid, cpuJiffies: utime + stime };
}

/** VmRSS of /proc/PID/status in bytes (0 for a kernel thread, which has none). */
export function parseResidentBytes(status: string): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

/**
 * A file of /proc, or null when its process ended meanwhile. Read synchronously: /proc is kernel
 * memory, not disk, so ~200 files take ~3 ms of the event loop; read asynchronously, each file
 * costs four thread-pool round trips, and the same reading took 40–60 ms of CPU.
 */
function readProcFile(path: string): string | null {
  try {
    return fs.readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/**
 * Every process from /proc, as systeminformation measured them: CPU as the process's share of
 * all cores' time since the previous reading (user + system, children left out; over its whole
 * life on the first reading), 100 being the whole machine.
 */
export function createProcessReader(): () => Promise<ProcessReading[]> {
  let previous: { totalJiffies: number; cpuJiffies: Map<number, number> } | null = null;
  return async () => {
    if (process.platform !== "linux") throw new Error("processes are read from /proc (Linux only)");
    const totalJiffies = parseTotalJiffies(fs.readFileSync("/proc/stat", "utf8"));
    const totalMemoryBytes = os.totalmem();
    const readings = fs
      .readdirSync("/proc")
      .filter((entry) => /^\d+$/.test(entry))
      .map((pid) => {
        const stat = readProcFile(`/proc/${pid}/stat`);
        const status = stat === null ? null : readProcFile(`/proc/${pid}/status`);
        const parsed = stat === null || status === null ? null : parseProcessStat(stat);
        return parsed && { ...parsed, rssBytes: parseResidentBytes(status!) };
      });
    const cpuJiffies = new Map<number, number>();
    const list: ProcessReading[] = [];
    for (const reading of readings) {
      if (!reading) continue;
      cpuJiffies.set(reading.pid, reading.cpuJiffies);
      const before = previous?.cpuJiffies.get(reading.pid);
      const [used, elapsed] =
        previous && before !== undefined
          ? [reading.cpuJiffies - before, totalJiffies - previous.totalJiffies]
          : [reading.cpuJiffies, totalJiffies];
      list.push({
        pid: reading.pid,
        parentPid: reading.parentPid,
        name: reading.name,
        cpuPercent: elapsed > 0 ? Math.min(100, Math.max(0, (used / elapsed) * 100)) : 0,
        memoryPercent: (reading.rssBytes / totalMemoryBytes) * 100,
        rssBytes: reading.rssBytes,
      });
    }
    previous = { totalJiffies, cpuJiffies };
    return list;
  };
}
