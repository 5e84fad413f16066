import { getDb } from "@/db/client";
import { env } from "@/lib/env";
import { backupAllAccounts, withBackupLease } from "./service";

// The nightly backup job (BACKUP_SCHEDULE, HH:MM server time), in the server process like the
// AutoSSL job. Checked every minute; a day's run starts at the scheduled time, or at the first
// check after it when the panel was down then (a missed night is caught up, never skipped). One
// instance runs it per repository at a time: the backup lease (lib/backups/service.ts).

const CHECK_MS = 60_000;

let lastRunDay: string | null = null;
let running = false;

/** Today's run when it is due: its day and scheduled time. */
function due(now: Date, schedule: string): { day: string; scheduled: Date } | null {
  const [hours, minutes] = schedule.split(":").map(Number);
  const day = now.toLocaleDateString("sv"); // YYYY-MM-DD, server time like the schedule
  const scheduled = new Date(now);
  scheduled.setHours(hours, minutes, 0, 0);
  return now >= scheduled && lastRunDay !== day ? { day, scheduled } : null;
}

async function check(): Promise<void> {
  const schedule = env().backup.schedule;
  if (!schedule || running) return;
  const today = due(new Date(), schedule);
  if (!today) return;
  const db = await getDb();
  running = true;
  try {
    // Accounts backed up since the scheduled time are done (by another instance, or before a restart).
    const outcome = await withBackupLease(db, () => backupAllAccounts(db, today.scheduled));
    if (!outcome) return; // another instance runs it
    lastRunDay = today.day;
    for (const [username, error] of Object.entries(outcome.result)) console.error(`[backups] ${username}: ${error}`);
  } finally {
    running = false;
  }
}

export function startBackupJob(): void {
  if (!env().backup.schedule) return;
  setInterval(() => void check().catch((error) => console.error("[backups] the nightly run failed:", error)), CHECK_MS).unref();
}
