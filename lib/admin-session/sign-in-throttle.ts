import { createHash } from "node:crypto";
import net from "node:net";
import { and, eq, inArray, like, lt, or, sql } from "drizzle-orm";
import type { Queryable } from "@/db/client";
import { signInAttempts } from "@/db/schema";

// Admin sign-in attempts are counted in the database (sign_in_attempts), so every instance sees
// the same counts and no amount of traffic resets them: per client address — an IPv6 client by
// its /64, the block one customer line gets — and per e-mail tried, whether or not an admin has
// it (so the throttle says nothing about which e-mails exist). Each attempt is counted before
// the password is checked, in one statement per subject, so requests racing each other cannot all
// slip under a limit. A sign-in clears its address's and e-mail's counts.
//
// An address has 5 attempts in 15 minutes from its first, then is refused until they pass. An
// e-mail is never closed: it slows. Its first 10 attempts are free; after them an attempt from an
// address that has tried before must wait 2^(n−10) s (n its attempts so far, at most 15 minutes)
// after the e-mail's last one, while an address with no attempt in its window is always heard —
// so ten wrong passwords from ten addresses cannot keep the right one out from an eleventh
// (issue 36), and a guesser gets at most one quick guess per fresh address. An e-mail's count is
// forgotten an hour after its last attempt.

export const MAX_ATTEMPTS_PER_ADDRESS = 5;
export const FREE_ATTEMPTS_PER_EMAIL = 10;
const ADDRESS_WINDOW = sql.raw("interval '15 minutes'");
const EMAIL_MEMORY = sql.raw("interval '1 hour'");
const MAX_BACKOFF_S = 15 * 60;
export const THROTTLED_MESSAGE = "Too many failed sign-ins; try again in 15 minutes";
const backingOffMessage = (seconds: number) => `Too many failed sign-ins for this e-mail; try again in ${seconds} s`;

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
 * Counts one sign-in attempt from `address` for `email`: null when its password may be checked,
 * else the refusal's words (the attempt must then stop before any password is checked).
 */
export async function countSignInAttempt(db: Queryable, address: string, email: string): Promise<string | null> {
  await pruneNowAndThen(db);
  const subjects = { address: addressSubject(address), email: emailSubject(email) };
  const { attempts, windowStartedAt: lastAt } = signInAttempts;
  const addressExpired = sql`${lastAt} < now() - ${ADDRESS_WINDOW}`;
  const [fromAddress] = await db
    .insert(signInAttempts)
    .values({ subject: subjects.address, attempts: 1, windowStartedAt: sql`now()` })
    .onConflictDoUpdate({
      target: signInAttempts.subject,
      set: {
        attempts: sql`CASE WHEN ${addressExpired} THEN 1 ELSE ${attempts} + 1 END`,
        windowStartedAt: sql`CASE WHEN ${addressExpired} THEN now() ELSE ${lastAt} END`,
      },
    })
    .returning({ attempts });
  if (fromAddress.attempts > MAX_ATTEMPTS_PER_ADDRESS) return THROTTLED_MESSAGE;
  // For an e-mail, window_started_at is the time of its last attempt.
  const forgotten = sql`${lastAt} < now() - ${EMAIL_MEMORY}`;
  const waitEnds = sql`${lastAt} + least(power(2, ${attempts} - ${FREE_ATTEMPTS_PER_EMAIL}), ${MAX_BACKOFF_S}) * interval '1 second'`;
  const heard = sql`${forgotten} OR ${attempts} < ${FREE_ATTEMPTS_PER_EMAIL} OR ${waitEnds} <= now()`;
  const freshAddress = fromAddress.attempts === 1;
  const counted = await db
    .insert(signInAttempts)
    .values({ subject: subjects.email, attempts: 1, windowStartedAt: sql`now()` })
    .onConflictDoUpdate({
      target: signInAttempts.subject,
      set: { attempts: sql`CASE WHEN ${forgotten} THEN 1 ELSE ${attempts} + 1 END`, windowStartedAt: sql`now()` },
      ...(freshAddress ? {} : { setWhere: heard }),
    })
    .returning({ attempts });
  if (counted.length > 0) return null;
  const [waiting] = await db
    .select({ seconds: sql<number>`greatest(1, ceil(extract(epoch from ${waitEnds} - now())))::int` })
    .from(signInAttempts)
    .where(eq(signInAttempts.subject, subjects.email));
  return backingOffMessage(waiting?.seconds ?? 1);
}

/**
 * The right password of an admin who must still give a code: that step is no guess, so it
 * counts for neither subject (the code, when it comes, is counted as any attempt).
 */
export async function uncountSignInAttempt(db: Queryable, address: string, email: string): Promise<void> {
  await db
    .update(signInAttempts)
    .set({ attempts: sql`greatest(${signInAttempts.attempts} - 1, 0)` })
    .where(inArray(signInAttempts.subject, [addressSubject(address), emailSubject(email)]));
}

/** A sign-in went through: its address and e-mail start again from nothing. */
export async function clearSignInAttempts(db: Queryable, address: string, email: string): Promise<void> {
  await db.delete(signInAttempts).where(inArray(signInAttempts.subject, [addressSubject(address), emailSubject(email)]));
}

// Rows whose window (an address's) or memory (an e-mail's) has passed are deleted at most once a
// minute per instance, by a sign-in.
const PRUNE_PERIOD_MS = 60_000;
const globalForPrune = globalThis as unknown as { __panelSignInPrunedAt?: number };

async function pruneNowAndThen(db: Queryable): Promise<void> {
  const now = Date.now();
  if (now - (globalForPrune.__panelSignInPrunedAt ?? 0) < PRUNE_PERIOD_MS) return;
  globalForPrune.__panelSignInPrunedAt = now;
  await db
    .delete(signInAttempts)
    .where(
      or(
        and(like(signInAttempts.subject, "address:%"), lt(signInAttempts.windowStartedAt, sql`now() - ${ADDRESS_WINDOW}`)),
        lt(signInAttempts.windowStartedAt, sql`now() - ${EMAIL_MEMORY}`),
      ),
    );
}
