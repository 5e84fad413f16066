import { asc, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { hostingAccounts, nodes } from "@/db/schema";
import { LOCAL_NODE } from "@/lib/nodes/schemas";
import { generateCombinedReport, VISITOR_STATS_PERIOD_MS } from "@/lib/provisioning/goaccess";
import { measureHome } from "./disk-usage";
import { homesEnabled } from "@/lib/provisioning/home-layout";

// The background work of each server process, every 15 minutes over every account of the
// panel's own machine (`local`; a node measures its own on request): its combined visitor
// statistics report and the measured size of its home. One account after the other: GoAccess
// and du are heavy, and the panel shares the server with the sites.

const globalForJob = globalThis as unknown as { __panelHostingJob?: NodeJS.Timeout };

async function refreshAll(): Promise<void> {
  const accounts = await (await getDb())
    .select({ username: hostingAccounts.username })
    .from(hostingAccounts)
    .innerJoin(nodes, eq(nodes.id, hostingAccounts.nodeId))
    .where(eq(nodes.name, LOCAL_NODE))
    .orderBy(asc(hostingAccounts.username));
  for (const { username } of accounts) {
    await generateCombinedReport(username).catch((error) =>
      console.error(`[visitor-stats] could not refresh the report of ${username}:`, (error as Error).message),
    );
    if (homesEnabled()) await measureHome(username);
  }
}

/** Runs the refresh now and every VISITOR_STATS_PERIOD_MS. */
export function startHostingJobs(): void {
  if (globalForJob.__panelHostingJob) return;
  const tick = () => void refreshAll().catch((error) => console.error("[hosting] background refresh failed:", error));
  globalForJob.__panelHostingJob = setInterval(tick, VISITOR_STATS_PERIOD_MS);
  globalForJob.__panelHostingJob.unref();
  tick();
}
