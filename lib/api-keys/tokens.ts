import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` characters of base62, uniformly drawn (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** The public key: "hcp_" lets secret scanners spot it; 24 base62 characters ≈ 143 bits. */
export const newApiKeyToken = () => `hcp_${randomBase62(24)}`;

/** The secret: 43 base62 characters ≈ 256 bits, so a fast hash is enough to store it. */
export const newApiSecret = () => randomBase62(43);

export const sha256Hex = (value: string) => createHash("sha256").update(value).digest("hex");

export function secretMatches(secret: string, storedHashHex: string): boolean {
  const given = createHash("sha256").update(secret).digest();
  const stored = Buffer.from(storedHashHex, "hex");
  return stored.length === given.length && timingSafeEqual(given, stored);
}

/** How many characters of a secret are kept, and shown in the list. */
export const SECRET_START_LENGTH = 4;

/** "AbCd••••••••" — the list shows only the start of a secret. */
export const maskSecret = (secretStart: string) => `${secretStart}${"•".repeat(12)}`;
