import type { Metadata } from "next";
import Link from "next/link";
import { MetricsCharts } from "@/components/metrics-charts";
import { ADMIN } from "@/lib/accounts/manager";
import { requireAdminSession } from "@/lib/admin-session/session";
import { backupStatus } from "@/lib/backups/service";
import { env } from "@/lib/env";
import { getMetricsStats, getServiceHistory, getSystemInfo, isMetricsRange, queryMetricsOverRange } from "@/lib/metrics/service";
import { flaggedAccounts, fleetNodes, needsAttention } from "@/lib/nodes/fleet";
import { clearDashboardCache } from "./actions";
import { BackupAlerts } from "./backup-alerts";
import { FleetTable, NeedsAttention } from "./fleet";

export const metadata: Metadata = { title: "Dashboard" };

// The dashboard: what needs the admin now, every node, this machine's system, backups, then the
// charts over the range picked (?range=1h|24h|7d|30d, 1 h without one).
export default async function DashboardPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { db } = await requireAdminSession();
  const asked = (await searchParams).range;
  const range = isMetricsRange(asked) ? asked : "1h";
  const [nodes, flagged, overRange, stats, system, services, backups] = await Promise.all([
    fleetNodes(db),
    flaggedAccounts(db),
    queryMetricsOverRange(db, range, env().metricsIntervalS),
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
          <Link className="button" href={`/admin?range=${range}`}>
            Refresh
          </Link>
          <button type="submit">Clear cache</button>
        </form>
      </div>
      <NeedsAttention items={needsAttention(nodes, backups.accounts, flagged)} />
      <FleetTable nodes={nodes} />
      <section className="card" aria-labelledby="system-heading">
        <h2 id="system-heading">This machine</h2>
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
      <MetricsCharts overRange={overRange} stats={stats} services={services} />
    </>
  );
}
