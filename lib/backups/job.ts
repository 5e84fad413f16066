import { randomUUID } from "node:crypto";
import { getDb } from "@/db/client";
import { env } from "@/lib/env";
import { backupAllAccounts, takeBackupLease } from "./service";

// The nightly backup job (BACKUP_SCHEDULE, HH:MM server time), in the server process like the
// AutoSSL job. Checked every minute; a day's run starts at the scheduled time, or at the first
// check after it when the panel was down then (a missed night is caught up, never skipped). One
// instance runs it per repository at a time: a lease in the database, renewed while it runs.

const CHECK_MS = 60_000;
const LEASE_MS = 10 * 60_000;

const holder = randomUUID();
let lastRunDay: string | null = null;
let running = false;

function due(now: Date, schedule: string): string | null {
  const [hours, minutes] = schedule.split(":").map(Number);
  const day = now.toLocaleDateString("sv"); // YYYY-MM-DD, server time like the schedule
  const scheduled = new Date(now);
  scheduled.setHours(hours, minutes, 0, 0);
  return now >= scheduled && lastRunDay !== day ? day : null;
}

async function check(): Promise<void> {
  const schedule = env().backup.schedule;
  if (!schedule || running) return;
  const day = due(new Date(), schedule);
  if (!day) return;
  const db = await getDb();
  if (!(await takeBackupLease(db, holder, LEASE_MS))) return;
  running = true;
  const renew = setInterval(() => void takeBackupLease(db, holder, LEASE_MS).catch(() => undefined), LEASE_MS / 2);
  try {
    const failures = await backupAllAccounts(db);
    lastRunDay = day;
    for (const [username, error] of Object.entries(failures)) console.error(`[backups] ${username}: ${error}`);
  } finally {
    clearInterval(renew);
    running = false;
  }
}

export function startBackupJob(): void {
  if (!env().backup.schedule) return;
  setInterval(() => void check().catch((error) => console.error("[backups] the nightly run failed:", error)), CHECK_MS).unref();
}
