import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { Database } from "@/db/client";
import { idempotencyKeys } from "@/db/schema";
import { AppError } from "@/lib/errors";

// Idempotency-Key (Stripe's): the first request with a key claims it by inserting its row (the
// primary key decides between concurrent requests, on any instance sharing the database), runs,
// and stores its answer; a retry with the key gets that answer and runs nothing.

/** What a request answered, kept as sent. */
export interface StoredAnswer {
  status: number;
  body: string;
}

export interface IdempotencyClaim {
  apiKeyId: number;
  key: string;
  /** Hash of what the request asks (method, path, body): a key is for one request only. */
  requestHash: string;
}

export const IDEMPOTENCY_FIELD = "Idempotency-Key";
/** How long a retry waits for the first request before answering 409. */
const WAIT_MS = 10_000;
const POLL_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `run` once for the claim's key and answers every request with the key by its answer.
 * Answers of 500 and above are not kept (the claim is released: a retry runs again), nor is a
 * throw. A retry while the first still runs waits for it, up to `waitMs`, then is a 409.
 */
export async function runOnce(
  db: Database,
  claim: IdempotencyClaim,
  run: () => Promise<StoredAnswer>,
  waitMs = WAIT_MS,
): Promise<StoredAnswer> {
  await pruneExpired(db);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const [claimed] = await db
      .insert(idempotencyKeys)
      .values(claim)
      .onConflictDoNothing()
      .returning({ apiKeyId: idempotencyKeys.apiKeyId });
    if (claimed) return runClaimed(db, claim, run);

    const [existing] = await db.select().from(idempotencyKeys).where(keyOf(claim));
    if (!existing) continue; // released by a failed first request since the insert: claim it
    if (existing.requestHash !== claim.requestHash) {
      const message = "was already used for a different request: send a new key for a new request";
      throw new AppError("VALIDATION", `${IDEMPOTENCY_FIELD} ${message}`, { [IDEMPOTENCY_FIELD]: [message] });
    }
    if (existing.responseStatus !== null) return { status: existing.responseStatus, body: existing.responseBody ?? "" };
    if (Date.now() >= deadline) {
      throw new AppError("CONFLICT", "A request with this Idempotency-Key is still running: retry it shortly");
    }
    await sleep(POLL_MS);
  }
}

const keyOf = (claim: IdempotencyClaim) =>
  and(eq(idempotencyKeys.apiKeyId, claim.apiKeyId), eq(idempotencyKeys.key, claim.key));

async function runClaimed(db: Database, claim: IdempotencyClaim, run: () => Promise<StoredAnswer>) {
  let answer: StoredAnswer;
  try {
    answer = await run();
  } catch (error) {
    await db.delete(idempotencyKeys).where(keyOf(claim));
    throw error;
  }
  if (answer.status >= 500) {
    await db.delete(idempotencyKeys).where(keyOf(claim));
  } else {
    await db
      .update(idempotencyKeys)
      .set({ responseStatus: answer.status, responseBody: answer.body })
      .where(keyOf(claim));
  }
  return answer;
}

/**
 * Keys are kept 24 hours. A claim still without an answer after 10 minutes belongs to a request
 * whose process died: it is released, or the key would answer 409 for a day.
 */
async function pruneExpired(db: Database) {
  await db
    .delete(idempotencyKeys)
    .where(
      or(
        lt(idempotencyKeys.createdAt, sql`now() - interval '24 hours'`),
        and(isNull(idempotencyKeys.responseStatus), lt(idempotencyKeys.createdAt, sql`now() - interval '10 minutes'`)),
      ),
    );
}
