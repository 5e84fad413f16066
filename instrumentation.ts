// Next.js calls register() once when the server starts: the metrics collector runs inside the
// server process (DESIGN.md "Real parts").
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { getDb } = await import("@/db/client");
  const { env } = await import("@/lib/env");
  const { startCollector } = await import("@/lib/metrics/collector");
  const { metricsIntervalS, metricsRetentionDays } = env();
  startCollector(await getDb(), { intervalS: metricsIntervalS, retentionDays: metricsRetentionDays });
}
