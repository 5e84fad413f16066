import { env } from "@/lib/env";
import { measureBytes } from "@/lib/provisioning/homes";
import { homeOf, homesEnabled } from "@/lib/provisioning/home-layout";

// The measured size of each account's home (`du` in a child process). A measurement is kept for
// DISK_USAGE_MAX_AGE_S (15 minutes): usage-details asks for a new one only when it is older,
// waits for it at most WAIT_MS, and otherwise answers the previous figure (null before the first)
// while the measurement goes on. One measurement per home at a time.

const WAIT_MS = 2_000;
const MB = 1024 * 1024;

interface Measurement {
  mb: number | null;
  at: number;
}

const globalForUsage = globalThis as unknown as {
  __panelDiskUsage?: { done: Map<string, Measurement>; running: Map<string, Promise<Measurement>> };
};
const state = (globalForUsage.__panelDiskUsage ??= { done: new Map(), running: new Map() });

/** Starts (or joins) a measurement of the account's home. */
export function measureHome(username: string): Promise<Measurement> {
  const running = state.running.get(username);
  if (running) return running;
  const measurement = measureBytes(homeOf(username))
    .then((bytes) => ({ mb: bytes === null ? null : Math.round((bytes / MB) * 100) / 100, at: Date.now() }))
    .catch((error) => {
      console.error(`[disk] could not measure the home of ${username}:`, (error as Error).message);
      return state.done.get(username) ?? { mb: null, at: Date.now() };
    })
    .then((result) => {
      state.done.set(username, result);
      state.running.delete(username);
      return result;
    });
  state.running.set(username, measurement);
  return measurement;
}

/** The home's size as last measured and when (ms), without measuring it (the accounts list); null when never. */
export function lastDiskUsage(username: string): { mb: number; at: number } | null {
  const last = state.done.get(username);
  return last && last.mb !== null ? { mb: last.mb, at: last.at } : null;
}

/**
 * The home's size in MB as last measured and when (ms), refreshed first when older than
 * DISK_USAGE_MAX_AGE_S; null before the first measurement or when the panel keeps no homes.
 */
export async function accountDiskUsage(username: string): Promise<{ mb: number; at: number } | null> {
  if (!homesEnabled()) return null;
  const last = state.done.get(username);
  const known = (measurement: Measurement | null | undefined) => (measurement && measurement.mb !== null ? { mb: measurement.mb, at: measurement.at } : null);
  if (last && Date.now() - last.at < env().diskUsageMaxAgeMs) return known(last);
  const fresh = measureHome(username);
  const timeout = new Promise<null>((resolve) => setTimeout(resolve, WAIT_MS, null).unref());
  return known((await Promise.race([fresh, timeout])) ?? last);
}
