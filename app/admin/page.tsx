import type { Metadata } from "next";
import Link from "next/link";
import { MetricsCharts } from "@/components/metrics-charts";
import { ADMIN } from "@/lib/accounts/manager";
import { requireAdminSession } from "@/lib/admin-session/session";
import { backupStatus } from "@/lib/backups/service";
import { env } from "@/lib/env";
import { getMetricsHistory, getMetricsStats, getServiceHistory, getSystemInfo } from "@/lib/metrics/service";
import { clearDashboardCache } from "./actions";
import { BackupAlerts } from "./backup-alerts";

export const metadata: Metadata = { title: "Dashboard" };

export default async function DashboardPage() {
  const { db } = await requireAdminSession();
  const [history, stats, system, services, backups] = await Promise.all([
    getMetricsHistory(60),
    getMetricsStats(),
    getSystemInfo(),
    getServiceHistory(300),
    backupStatus(db, ADMIN),
  ]);
  return (
    <>
      <div className="actions" style={{ justifyContent: "space-between" }}>
        <h1>Dashboard</h1>
        <form action={clearDashboardCache} className="actions">
          <Link className="button" href="/admin">
            Refresh
          </Link>
          <button type="submit">Clear cache</button>
        </form>
      </div>
      <section className="card" aria-labelledby="system-heading">
        <h2 id="system-heading">System</h2>
        <div className="grid">
          <div>
            <div className="muted">Hostname</div>
            <div className="stat">{system.hostname}</div>
          </div>
          <div>
            <div className="muted">Operating system</div>
            <div>
              {system.distro.name} {system.distro.version} · kernel {system.kernelVersion} · {system.arch}
            </div>
          </div>
          <div>
            <div className="muted">CPU</div>
            <div>
              {system.cpu.cores} cores · {system.cpu.model}
            </div>
          </div>
          <div>
            <div className="muted">Memory</div>
            <div>
              {system.memory.usedGB} / {system.memory.totalGB} GB used ({system.memory.percent} %)
            </div>
          </div>
          <div>
            <div className="muted">Uptime</div>
            <div>{system.uptime.formatted}</div>
          </div>
        </div>
      </section>
      <BackupAlerts accounts={backups.accounts} scheduled={env().backup.schedule !== null} />
      <MetricsCharts history={history} stats={stats} services={services} />
    </>
  );
}
