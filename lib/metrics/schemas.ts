import { z } from "zod";
import { nodeNameField } from "@/lib/nodes/schemas";

// Field names and types exactly as SPEC.md "Metrics" gives them; timestamps in milliseconds.

const float = z.number();
const int = z.number().int();

/** `?node=NAME`: that node's figures instead of the panel's machine (`local` is the panel's machine). */
export const nodeQuerySchema = z.object({
  node: nodeNameField.optional(),
});

export const historyQuerySchema = nodeQuerySchema.extend({
  limit: z.coerce.number().int().min(1).max(100).default(15),
});

export const serviceHistoryQuerySchema = nodeQuerySchema.extend({
  limit: z.coerce.number().int().min(1).optional(),
});

export const clearCacheBodySchema = z
  .object({
    limit: z.number().int().min(1).max(100).optional(),
    clear_stats: z.boolean().default(false),
    clear_system_info: z.boolean().default(false),
    clear_service_history: z.boolean().default(false),
  })
  .strict();

export const metricsHistoryRecordSchema = z.object({
  id: int,
  timestamp: int,
  cpu_percent: float,
  ram_percent: float,
  ram_total_mb: float,
  ram_used_mb: float,
  ram_free_mb: float,
});

export const serviceHistoryRecordSchema = z.object({
  id: int,
  timestamp: int,
  service_name: z.string(),
  cpu_percent: float,
  memory_mb: float,
  memory_percent: float,
  process_count: int,
});

const minAvgMax = z.object({ average: float, minimum: float, maximum: float });

export const metricsStatsSchema = z.object({
  cpu: minAvgMax,
  cpu_cores: z.array(minAvgMax.extend({ core: z.string(), current: float })),
  ram: minAvgMax,
  disks: z.array(
    z.object({
      device: z.string(),
      mounted_on: z.string(),
      average: float,
      minimum: int,
      maximum: int,
      avg_used_gb: float,
      max_used_gb: int,
      current_used_gb: int,
      current_free_gb: int,
      current_total_gb: int,
      current_used_percentage: int,
    }),
  ),
  networks: z.array(
    z.object({
      interface: z.string(),
      avg_rx_bytes: float,
      avg_rx_packets: float,
      avg_tx_bytes: float,
      avg_tx_packets: float,
      current_rx_bytes: int,
      current_rx_packets: int,
      current_tx_bytes: int,
      current_tx_packets: int,
      max_rx_bytes: int,
      max_rx_packets: int,
      max_tx_bytes: int,
      max_tx_packets: int,
      total_rx_drops: int,
      total_rx_errors: int,
      total_tx_drops: int,
      total_tx_errors: int,
    }),
  ),
});

export const systemInfoSchema = z.object({
  arch: z.string(),
  cpu: z.object({ cores: int, model: z.string(), speed: int }),
  distro: z.object({ id: z.string(), name: z.string(), version: z.string() }),
  hostname: z.string(),
  kernelVersion: z.string(),
  release: z.string(),
  platform: z.string(),
  nodeVersion: z.string(),
  memory: z.object({
    free: int,
    total: int,
    used: int,
    freeGB: z.string(),
    totalGB: z.string(),
    usedGB: z.string(),
    percent: z.string(),
  }),
  networkInterfaces: z.array(
    z.object({
      name: z.string(),
      addresses: z.array(
        z.object({
          address: z.string(),
          family: z.string(),
          internal: z.boolean(),
          mac: z.string(),
          netmask: z.string(),
        }),
      ),
    }),
  ),
  uptime: z.object({ seconds: int, formatted: z.string() }),
});

// A sample a node's agent sends (lib/provisioning/metrics-sample.ts), checked as anything a node
// says: finite numbers, whole non-negative counters (bigint columns), bounded names and lists.
const figure = z.number().finite();
const counter = z.number().int().min(0);
const label = z.string().min(1).max(255);

export const machineSampleSchema = z.object({
  cpu: z.object({ percent: figure, cores: z.array(figure).max(1024) }).nullable(),
  memory: z.object({ totalBytes: counter, availableBytes: counter }).nullable(),
  filesystems: z
    .array(z.object({ device: label, mountedOn: label, sizeBytes: counter, usedBytes: counter, availableBytes: counter, usedPercent: figure }))
    .max(256),
  networks: z
    .array(
      z.object({
        interface: label,
        rxBytes: counter,
        rxPackets: counter,
        rxDrops: counter,
        rxErrors: counter,
        txBytes: counter,
        txPackets: counter,
        txDrops: counter,
        txErrors: counter,
      }),
    )
    .max(256),
  services: z
    .array(z.object({ serviceName: label, cpuPercent: figure, memoryMb: figure, memoryPercent: figure, processCount: counter }))
    .max(64),
});
