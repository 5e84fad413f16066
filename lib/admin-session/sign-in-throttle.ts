// Failed admin sign-ins are limited per client address: after MAX_FAILURES within WINDOW_MS,
// further attempts from that address are refused until the window has passed.

const MAX_FAILURES = 5;
const WINDOW_MS = 15 * 60 * 1000;
const MAX_TRACKED = 10_000;

const globalForThrottle = globalThis as unknown as { __panelSignInFailures?: Map<string, { count: number; since: number }> };
const failures = (globalForThrottle.__panelSignInFailures ??= new Map());

function current(address: string) {
  const entry = failures.get(address);
  if (entry && Date.now() - entry.since > WINDOW_MS) {
    failures.delete(address);
    return undefined;
  }
  return entry;
}

export const isThrottled = (address: string) => (current(address)?.count ?? 0) >= MAX_FAILURES;

export function recordFailure(address: string): void {
  if (failures.size >= MAX_TRACKED) failures.clear();
  const entry = current(address) ?? { count: 0, since: Date.now() };
  entry.count += 1;
  failures.set(address, entry);
}

export const recordSuccess = (address: string) => failures.delete(address);
