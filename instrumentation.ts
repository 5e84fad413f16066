// Runs once per server process, before the first request (Next.js instrumentation hook): the
// metrics collector, the job that refreshes each account's combined visitor statistics and
// measured disk usage, the nightly backups (BACKUP_SCHEDULE), the hourly sweep of retired DKIM
// keys, and AutoSSL's certificate job when an ACME directory is configured.
export async function register() {
  // Both need Node.js (systeminformation, goaccess, the database) and no build-time run.
  if (process.env.NEXT_RUNTIME !== "nodejs" || process.env.NEXT_PHASE === "phase-production-build") return;
  const { startMetricsCollector } = await import("./lib/metrics/collector");
  const { startHostingJobs } = await import("./lib/hosting/jobs");
  const { autoSslConfigured, startAutoSslJob } = await import("./lib/autossl/job");
  const { startBackupJob } = await import("./lib/backups/job");
  const { startMailJobs } = await import("./lib/email/jobs");
  startMetricsCollector();
  startBackupJob();
  startHostingJobs();
  startMailJobs();
  if (autoSslConfigured()) startAutoSslJob();
}
