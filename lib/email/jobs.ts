import { getDb } from "@/db/client";
import { sweepRetiredDkimKeys } from "./dkim";

// The mail job, in the server process like the other jobs (instrumentation.ts): once an hour, the
// DKIM records of keys retired more than 7 days ago leave their zones
// (lib/email/dkim.ts). A record may so stay up to an hour past its 7 days; none goes early.

const SWEEP_MS = 3600_000;

const globalForJob = globalThis as unknown as { __panelMailJob?: NodeJS.Timeout };

async function sweep(): Promise<void> {
  const removed = await sweepRetiredDkimKeys(await getDb());
  if (removed > 0) console.log(`[mail] ${removed} retired DKIM key(s) unpublished`);
}

export function startMailJobs(): void {
  if (globalForJob.__panelMailJob) return;
  const run = () => void sweep().catch((error) => console.error("[mail] the sweep of retired DKIM keys failed:", (error as Error).message));
  globalForJob.__panelMailJob = setInterval(run, SWEEP_MS);
  globalForJob.__panelMailJob.unref();
}
