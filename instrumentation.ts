// Runs once per server process, before the first request (Next.js instrumentation hook): the
// metrics collector and the job that pre-generates each account's combined visitor statistics.
export async function register() {
  // Both need Node.js (systeminformation, goaccess, the database) and no build-time run.
  if (process.env.NEXT_RUNTIME !== "nodejs" || process.env.NEXT_PHASE === "phase-production-build") return;
  const { startMetricsCollector } = await import("./lib/metrics/collector");
  const { startVisitorStatsJob } = await import("./lib/provisioning/goaccess");
  startMetricsCollector();
  startVisitorStatsJob();
}
