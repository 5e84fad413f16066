import { groupServices, type ServiceUsage } from "./metrics-services";
import { type CpuReading, type FilesystemReading, type MemoryReading, type MetricsSources, type NetworkCounters, systemSources } from "./metrics-sources";

// One sample of a machine's figures, as GET /api/metrics/* reports them: taken by the panel's
// collector for its own machine (lib/metrics/collector.ts), and by a node's agent for the node
// (lib/agent/main.ts sends each to the panel, which stores it under the node). Each source can
// fail alone: it is logged once, left out of the sample, and logged again when it is back.
//   networks  bytes, packets, drops and errors during the interval (the difference of
//             /proc/net/dev's counters). The first sample after start has no previous counters
//             and so no networks (counters since boot are not an interval); an interface whose
//             counters went down (reset, wrap) is left out of that sample.
//   services  one per running service (lib/provisioning/metrics-services.ts)

export interface MachineSample {
  cpu: CpuReading | null;
  memory: MemoryReading | null;
  filesystems: FilesystemReading[];
  networks: NetworkCounters[];
  services: ServiceUsage[];
  /** The sources that could not be read this time. */
  failedSources: string[];
}

export interface SamplerOptions {
  sources?: MetricsSources;
  /** The process the "panel" service is rooted at (a node's: its agent). */
  panelPid?: number;
  log?: (message: string, error?: unknown) => void;
}

const NETWORK_FIELDS = ["rxBytes", "rxPackets", "txBytes", "txPackets", "rxDrops", "rxErrors", "txDrops", "txErrors"] as const;

/** A sampler of this machine: each take() reads every source, networks as the difference since the previous take(). */
export function createSampler(options: SamplerOptions = {}): { take(): Promise<MachineSample> } {
  const sources = options.sources ?? systemSources;
  const panelPid = options.panelPid ?? process.pid;
  const log = options.log ?? ((message, error) => console.error(`[metrics] ${message}`, error ?? ""));
  let previousCounters: Map<string, NetworkCounters> | null = null;
  // The last failure per source: a source that keeps failing is logged once, not every sample.
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

  return {
    async take() {
      const failed: string[] = [];
      // One after another: the readings are cheap, and sequential reads keep the sample's CPU use flat.
      const cpu = await read("CPU load", failed, () => sources.cpu());
      const memory = await read("memory", failed, () => sources.memory());
      const filesystems = await read("filesystems", failed, () => sources.filesystems());
      const counters = await read("network counters", failed, () => sources.networkCounters());
      const processes = await read("processes", failed, () => sources.processes());
      return {
        cpu,
        memory,
        filesystems: filesystems ?? [],
        networks: counters ? networkDifferences(counters) : [],
        services: processes ? groupServices(processes, panelPid, memory?.totalBytes ?? null) : [],
        failedSources: failed,
      };
    },
  };
}
