// Next.js calls register() once when the server starts: the metrics collector runs inside the
// server process (DESIGN.md "Real parts"), and so does the job that pre-generates
// each account's combined visitor statistics.
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { getDb } = await import("@/db/client");
  const { env } = await import("@/lib/env");
  const { startCollector } = await import("@/lib/metrics/collector");
  const { startVisitorStatsJob } = await import("@/lib/provisioning/goaccess");
  const { metricsIntervalS, metricsRetentionDays } = env();
  startCollector(await getDb(), { intervalS: metricsIntervalS, retentionDays: metricsRetentionDays });
  startVisitorStatsJob();
}
