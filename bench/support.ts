import autocannon from "autocannon";

export interface Measurement {
  label: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  /** Requests answered in the measurement. */
  requests: number;
}

/** autocannon at 32 connections for `seconds` against one URL. */
export async function measure(
  label: string,
  url: string,
  headers: Record<string, string> = {},
  seconds = Number(process.env.BENCH_SECONDS ?? 10),
): Promise<Measurement> {
  const result = await autocannon({ url, connections: 32, duration: seconds, headers });
  return {
    label,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    requests: result.requests.total,
  };
}

export function printTable(rows: Measurement[]) {
  console.log("\n| route | req/s | p50 ms | p99 ms | errors | non-2xx |\n|---|---:|---:|---:|---:|---:|");
  for (const row of rows) {
    console.log(
      `| ${row.label} | ${row.requestsPerSecond.toFixed(0)} | ${row.p50Ms} | ${row.p99Ms} | ${row.errors} | ${row.non2xx} |`,
    );
  }
}


/**
 * `measured` against a baseline measured just before and just after it (their mean), so that a
 * machine warming up or slowing down during the run favours neither side.
 */
export const ratioToBracket = (measured: Measurement, before: Measurement, after: Measurement) =>
  measured.requestsPerSecond / ((before.requestsPerSecond + after.requestsPerSecond) / 2);

/** Prints whether `value` meets `target`: "≥" (higher is better), "<" or "≤" (lower is better). */
export function verdict(name: string, value: number, target: number, comparison: "≥" | "<" | "≤" = "≥") {
  const ok = comparison === "≥" ? value >= target : comparison === "<" ? value < target : value <= target;
  console.log(`${name}: ${value.toFixed(3)} (target ${comparison} ${target}) ${ok ? "MET" : "NOT MET"}`);
  return ok;
}
