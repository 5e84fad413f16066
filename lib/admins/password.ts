import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";
import { AppError } from "@/lib/errors";

// Admin passwords: scrypt (N=2^15, r=8, p=1), stored as "scrypt$N$r$p$salt$hash" (base64).
// Slow on purpose; API secrets are random and use SHA-256 instead (lib/api-keys/tokens.ts).
//
// Each scrypt takes ~32 MiB and tens of milliseconds of a libuv thread. Left alone, a flood of
// sign-in requests queues thousands of them in libuv's pool (4 threads, shared with file and DNS
// work): memory grows, and every other request waiting on the pool waits behind them. So scrypt
// runs through one small queue per process: SCRYPT_RUNNING at a time, SCRYPT_WAITING more
// waiting, and beyond that an immediate "busy" refusal (503) instead of a hang.

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

const N = 2 ** 15;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
const maxmem = 64 * 1024 * 1024;

export const SCRYPT_RUNNING = 2;
export const SCRYPT_WAITING = 16;

export const PASSWORD_CHECKS_BUSY = "The panel is busy checking passwords; try again in a moment";

interface ScryptQueue {
  running: number;
  /** Each waiting caller's go-ahead, oldest first. */
  waiting: (() => void)[];
}

// On globalThis: route handlers and instrumentation.ts get module instances of their own, and
// they share one process's threads.
const globalForQueue = globalThis as unknown as { __panelScryptQueue?: ScryptQueue };
const queue: ScryptQueue = (globalForQueue.__panelScryptQueue ??= { running: 0, waiting: [] });

/** Runs `work` when its turn comes; a full queue refuses at once (AppError UNAVAILABLE). */
async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (queue.running < SCRYPT_RUNNING) {
    queue.running += 1;
  } else {
    if (queue.waiting.length >= SCRYPT_WAITING) throw new AppError("UNAVAILABLE", PASSWORD_CHECKS_BUSY);
    // The finishing caller hands its place over: `running` stays as it is.
    await new Promise<void>((resolve) => queue.waiting.push(resolve));
  }
  try {
    return await work();
  } finally {
    const next = queue.waiting.shift();
    if (next) next();
    else queue.running -= 1;
  }
}

const derive = (password: string, salt: Buffer, length: number, n: number, r: number, p: number) =>
  inTurn(() => scryptAsync(password, salt, length, { N: n, r, p, maxmem }));

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, KEY_LENGTH, N, R, P);
  return ["scrypt", N, R, P, salt.toString("base64"), hash.toString("base64")].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [algorithm, n, r, p, salt, hash] = stored.split("$");
  if (algorithm !== "scrypt" || !hash) return false;
  const expected = Buffer.from(hash, "base64");
  const actual = await derive(password, Buffer.from(salt, "base64"), expected.length, Number(n), Number(r), Number(p));
  return timingSafeEqual(actual, expected);
}

// A hash no password matches in practice (random salt and hash), with the parameters of real ones.
const NO_ADMIN_HASH = ["scrypt", N, R, P, randomBytes(16).toString("base64"), randomBytes(KEY_LENGTH).toString("base64")].join("$");

/**
 * Whether `password` is the one of `stored`; with no stored hash (no such admin) the same scrypt
 * runs against a hash nothing matches, so an unknown e-mail answers no sooner than a known one.
 */
export async function verifyPasswordOrNone(password: string, stored: string | null): Promise<boolean> {
  const matches = await verifyPassword(password, stored ?? NO_ADMIN_HASH);
  return stored !== null && matches;
}
