// Runs once per server process, before the first request (Next.js instrumentation hook).
export async function register() {
  // The collector needs Node.js (systeminformation, the database) and no build-time run.
  if (process.env.NEXT_RUNTIME !== "nodejs" || process.env.NEXT_PHASE === "phase-production-build") return;
  const { startMetricsCollector } = await import("./lib/metrics/collector");
  startMetricsCollector();
}
