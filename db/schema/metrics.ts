import {
  bigint,
  doublePrecision,
  index,
  integer,
  pgTable,
  text,
  timestamp,
} from "drizzle-orm/pg-core";
import { nodes } from "./nodes";

// One row per sample of a machine; the per-core, per-disk and per-interface rows hang off it.
// `node_id`: the node whose agent sent the sample; null for the panel's own machine (its
// collector), which is what the API reports without `?node=`.
export const metricSamples = pgTable(
  "metric_samples",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    nodeId: integer("node_id").references(() => nodes.id, { onDelete: "cascade" }),
    takenAt: timestamp("taken_at", { withTimezone: true }).notNull().defaultNow(),
    cpuPercent: doublePrecision("cpu_percent").notNull(),
    ramPercent: doublePrecision("ram_percent").notNull(),
    ramTotalMb: doublePrecision("ram_total_mb").notNull(),
    ramUsedMb: doublePrecision("ram_used_mb").notNull(),
    ramFreeMb: doublePrecision("ram_free_mb").notNull(),
  },
  (table) => [
    // Pruning (every machine's samples older than the retention).
    index("metric_samples_taken_at_idx").on(table.takenAt),
    // One machine's history (newest first) and stats window.
    index("metric_samples_node_taken_at_idx").on(table.nodeId, table.takenAt),
  ],
);

export const metricCpuCoreSamples = pgTable(
  "metric_cpu_core_samples",
  {
    sampleId: integer("sample_id")
      .notNull()
      .references(() => metricSamples.id, { onDelete: "cascade" }),
    core: text("core").notNull(),
    percent: doublePrecision("percent").notNull(),
  },
  (table) => [index("metric_cpu_core_samples_sample_id_idx").on(table.sampleId)],
);

export const metricDiskSamples = pgTable(
  "metric_disk_samples",
  {
    sampleId: integer("sample_id")
      .notNull()
      .references(() => metricSamples.id, { onDelete: "cascade" }),
    device: text("device").notNull(),
    mountedOn: text("mounted_on").notNull(),
    usedBytes: bigint("used_bytes", { mode: "number" }).notNull(),
    sizeBytes: bigint("size_bytes", { mode: "number" }).notNull(),
    // df's "Avail": what is left for users (size − used also counts blocks reserved for root).
    availableBytes: bigint("available_bytes", { mode: "number" }).notNull(),
    usedPercent: doublePrecision("used_percent").notNull(),
  },
  (table) => [index("metric_disk_samples_sample_id_idx").on(table.sampleId)],
);

// Counters are per sampling interval (the difference since the previous tick), not totals.
export const metricNetworkSamples = pgTable(
  "metric_network_samples",
  {
    sampleId: integer("sample_id")
      .notNull()
      .references(() => metricSamples.id, { onDelete: "cascade" }),
    interface: text("interface").notNull(),
    rxBytes: bigint("rx_bytes", { mode: "number" }).notNull(),
    rxPackets: bigint("rx_packets", { mode: "number" }).notNull(),
    txBytes: bigint("tx_bytes", { mode: "number" }).notNull(),
    txPackets: bigint("tx_packets", { mode: "number" }).notNull(),
    rxDrops: bigint("rx_drops", { mode: "number" }).notNull(),
    rxErrors: bigint("rx_errors", { mode: "number" }).notNull(),
    txDrops: bigint("tx_drops", { mode: "number" }).notNull(),
    txErrors: bigint("tx_errors", { mode: "number" }).notNull(),
  },
  (table) => [index("metric_network_samples_sample_id_idx").on(table.sampleId)],
);

export const serviceSamples = pgTable(
  "service_samples",
  {
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    // As metric_samples.node_id.
    nodeId: integer("node_id").references(() => nodes.id, { onDelete: "cascade" }),
    takenAt: timestamp("taken_at", { withTimezone: true }).notNull().defaultNow(),
    serviceName: text("service_name").notNull(),
    cpuPercent: doublePrecision("cpu_percent").notNull(),
    memoryMb: doublePrecision("memory_mb").notNull(),
    memoryPercent: doublePrecision("memory_percent").notNull(),
    processCount: integer("process_count").notNull(),
  },
  (table) => [
    index("service_samples_taken_at_idx").on(table.takenAt),
    index("service_samples_node_taken_at_idx").on(table.nodeId, table.takenAt),
  ],
);
