// Runs once per server process, before the first request (Next.js instrumentation hook): the
// metrics collector, the job that pre-generates each account's combined visitor statistics, and
// AutoSSL's certificate job when an ACME directory is configured.
export async function register() {
  // Both need Node.js (systeminformation, goaccess, the database) and no build-time run.
  if (process.env.NEXT_RUNTIME !== "nodejs" || process.env.NEXT_PHASE === "phase-production-build") return;
  const { startMetricsCollector } = await import("./lib/metrics/collector");
  const { startVisitorStatsJob } = await import("./lib/provisioning/goaccess");
  const { autoSslConfigured, startAutoSslJob } = await import("./lib/autossl/job");
  startMetricsCollector();
  startVisitorStatsJob();
  if (autoSslConfigured()) startAutoSslJob();
}
