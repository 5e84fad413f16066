import { createHash } from "node:crypto";
import net from "node:net";
import { inArray, lt, sql } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { signInAttempts } from "@/db/schema";

// Admin sign-in attempts are counted in the database (sign_in_attempts), so every instance sees
// the same counts and no amount of traffic resets them: per client address — an IPv6 client by
// its /64, the block one customer line gets — and per e-mail tried, whether or not an admin has
// it (so the throttle says nothing about which e-mails exist). Each attempt is counted before
// the password is checked, in one statement, so requests racing each other cannot all slip
// under the limit. A sign-in clears its address's and e-mail's counts; other rows are deleted
// only once their window has passed.

export const MAX_ATTEMPTS_PER_ADDRESS = 5;
export const MAX_ATTEMPTS_PER_EMAIL = 10;
const WINDOW = sql.raw("interval '15 minutes'");
export const THROTTLED_MESSAGE = "Too many failed sign-ins; try again in 15 minutes";

/** The first 64 bits of an IPv6 address, as `2001:db8:0:1::/64`. */
function ipv6Network64(address: string): string {
  const groupsOf = (part: string) => {
    if (!part) return [];
    const groups = part.split(":");
    // An IPv4 tail (::ffff:192.0.2.1) is two groups.
    if (groups[groups.length - 1].includes(".")) groups.splice(-1, 1, "0", "0");
    return groups;
  };
  const [head, tail] = address.includes("::") ? address.split("::") : [address, null];
  const before = groupsOf(head);
  const after = tail === null ? [] : groupsOf(tail);
  const groups = [...before, ...Array(8 - before.length - after.length).fill("0"), ...after];
  return `${groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16)).join(":")}::/64`;
}

/** The subject an address is counted under: itself (IPv4), its /64 (IPv6). */
export function addressSubject(address: string): string {
  return `address:${net.isIPv6(address) ? ipv6Network64(address) : address}`;
}

export const emailSubject = (email: string) =>
  `email:${createHash("sha256").update(email.trim().toLowerCase()).digest("hex")}`;

/**
 * Counts one sign-in attempt from `address` for `email`; true when either is over its limit
 * (the attempt must then stop before any password is checked). A subject's window starts at its
 * first attempt and lasts 15 minutes.
 */
export async function countSignInAttempt(db: Queryable, address: string, email: string): Promise<boolean> {
  await pruneNowAndThen(db);
  const subjects = { address: addressSubject(address), email: emailSubject(email) };
  const expired = sql`${signInAttempts.windowStartedAt} < now() - ${WINDOW}`;
  const counted = await db
    .insert(signInAttempts)
    .values([
      { subject: subjects.address, attempts: 1, windowStartedAt: sql`now()` },
      { subject: subjects.email, attempts: 1, windowStartedAt: sql`now()` },
    ])
    .onConflictDoUpdate({
      target: signInAttempts.subject,
      set: {
        attempts: sql`CASE WHEN ${expired} THEN 1 ELSE ${signInAttempts.attempts} + 1 END`,
        windowStartedAt: sql`CASE WHEN ${expired} THEN now() ELSE ${signInAttempts.windowStartedAt} END`,
      },
    })
    .returning({ subject: signInAttempts.subject, attempts: signInAttempts.attempts });
  const attemptsOf = (subject: string) => counted.find((row) => row.subject === subject)?.attempts ?? 0;
  return attemptsOf(subjects.address) > MAX_ATTEMPTS_PER_ADDRESS || attemptsOf(subjects.email) > MAX_ATTEMPTS_PER_EMAIL;
}

/** A sign-in went through: its address and e-mail start again from nothing. */
export async function clearSignInAttempts(db: Queryable, address: string, email: string): Promise<void> {
  await db.delete(signInAttempts).where(inArray(signInAttempts.subject, [addressSubject(address), emailSubject(email)]));
}

// Rows whose window has passed are deleted at most once a minute per instance, by a sign-in.
const PRUNE_PERIOD_MS = 60_000;
const globalForPrune = globalThis as unknown as { __panelSignInPrunedAt?: number };

async function pruneNowAndThen(db: Queryable): Promise<void> {
  const now = Date.now();
  if (now - (globalForPrune.__panelSignInPrunedAt ?? 0) < PRUNE_PERIOD_MS) return;
  globalForPrune.__panelSignInPrunedAt = now;
  await db.delete(signInAttempts).where(lt(signInAttempts.windowStartedAt, sql`now() - ${WINDOW}`));
}
