import { createHash, randomBytes } from "node:crypto";

// Mailbox passwords, stored only as a hash Dovecot verifies itself (docs/email.md "Passwords"):
// SHA512-CRYPT, Ulrich Drepper's SHA-crypt ("$6$", https://www.akkadia.org/drepper/SHA-crypt.txt),
// which glibc's and libxcrypt's crypt(3) verify and so Dovecot's CRYPT and SHA512-CRYPT schemes.
// Why this scheme: Node's crypto computes it (SHA-512 only, no dependency), where BLF-CRYPT
// (bcrypt) or ARGON2ID would need a package with native code or a hand-written Blowfish; and
// Dovecot 2.3 verifies it with no configuration. The cost is ROUNDS iterations of SHA-512, computed
// here one createHash per round on the event loop: 5000 rounds took 35-55 ms on this 2-core machine
// under load, 20,000 rounds 170-320 ms (docs/email.md "Passwords"), so crypt(3)'s default it is —
// the hash is made only when a password is set, and the passwd-file is root's and Dovecot's alone.

/** SHA-crypt iterations: crypt(3)'s and `doveadm pw -s SHA512-CRYPT`'s default. */
export const ROUNDS = 5000;

const ALPHABET = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** The order in which SHA-crypt writes the 64 bytes of the last digest, three at a time. */
const FINAL_ORDER = [
  [0, 21, 42], [22, 43, 1], [44, 2, 23], [3, 24, 45], [25, 46, 4], [47, 5, 26], [6, 27, 48],
  [28, 49, 7], [50, 8, 29], [9, 30, 51], [31, 52, 10], [53, 11, 32], [12, 33, 54], [34, 55, 13],
  [56, 14, 35], [15, 36, 57], [37, 58, 16], [59, 17, 38], [18, 39, 60], [40, 61, 19], [62, 20, 41],
];

const sha512 = (...parts: Buffer[]) => {
  const hash = createHash("sha512");
  for (const part of parts) hash.update(part);
  return hash.digest();
};

/** `length` bytes of `block` repeated. */
const repeated = (block: Buffer, length: number) => {
  const out = Buffer.alloc(length);
  for (let at = 0; at < length; at += block.length) block.copy(out, at, 0, Math.min(block.length, length - at));
  return out;
};

function encode24(b2: number, b1: number, b0: number, chars: number): string {
  let word = (b2 << 16) | (b1 << 8) | b0;
  let out = "";
  for (let n = 0; n < chars; n++) {
    out += ALPHABET[word & 0x3f];
    word >>= 6;
  }
  return out;
}

/** crypt(3)'s "$6$rounds=R$salt$hash" of `password` with `salt` (at most 16 characters of ./0-9A-Za-z). */
export function sha512Crypt(password: string, salt: string, rounds = ROUNDS): string {
  if (!/^[./0-9A-Za-z]{1,16}$/.test(salt)) throw new Error("a SHA-crypt salt is 1 to 16 characters of ./0-9A-Za-z");
  if (!Number.isInteger(rounds) || rounds < 1000 || rounds > 999_999_999) throw new Error("SHA-crypt rounds are 1000 to 999999999");
  const p = Buffer.from(password, "utf8");
  const s = Buffer.from(salt, "ascii");
  const b = sha512(p, s, p);
  const a = createHash("sha512").update(p).update(s);
  a.update(repeated(b, p.length));
  for (let length = p.length; length > 0; length >>= 1) a.update(length & 1 ? b : p);
  let c = a.digest();
  const dp = sha512(...Array<Buffer>(p.length).fill(p));
  const pSequence = repeated(dp, p.length);
  const ds = sha512(...Array<Buffer>(16 + c[0]).fill(s));
  const sSequence = ds.subarray(0, s.length);
  for (let round = 0; round < rounds; round++) {
    const hash = createHash("sha512");
    hash.update(round & 1 ? pSequence : c);
    if (round % 3) hash.update(sSequence);
    if (round % 7) hash.update(pSequence);
    hash.update(round & 1 ? c : pSequence);
    c = hash.digest();
  }
  let encoded = "";
  for (const [x, y, z] of FINAL_ORDER) encoded += encode24(c[x], c[y], c[z], 4);
  encoded += encode24(0, 0, c[63], 2);
  return `$6$rounds=${rounds}$${salt}$${encoded}`;
}

/** A new random salt of 16 characters. */
function newSalt(): string {
  return [...randomBytes(16)].map((byte) => ALPHABET[byte & 0x3f]).join("");
}

/** What is stored for a mailbox password: Dovecot's scheme prefix and the crypt(3) string. */
export function mailboxPasswordHash(password: string): string {
  return `{SHA512-CRYPT}${sha512Crypt(password, newSalt())}`;
}
