import { createHash, createPublicKey, type JsonWebKey } from "node:crypto";
import { SSH_KEY_TYPES, type SshKeyType } from "@/lib/provisioning/rules";

// One OpenSSH public key line ("ssh-ed25519 AAAA… comment"), checked the way sshd reads it: the
// key's blob is decoded and taken apart (RFC 4253 §6.6, RFC 5656 §3.1, RFC 8709 §4), the key is
// imported by Node's crypto (a point off its curve or a broken modulus is refused), and what is
// kept is only the type and the blob. Options ("command=…", "from=…"), a second line and the
// comment never get through: the comment is dropped, the rest refused.

export const MIN_RSA_BITS = 2048;
const MAX_RSA_BITS = 16384;

export interface SshPublicKey {
  type: SshKeyType;
  /** The blob in base64, as it is written into an authorized_keys line. */
  data: string;
  /** "SHA256:…", as `ssh-keygen -l` prints it. */
  fingerprint: string;
}

/** Why a key line was refused: the message is for the customer (422 at `public_key`). */
export class BadPublicKeyError extends Error {}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const CURVES = {
  "ecdsa-sha2-nistp256": { name: "nistp256", jwk: "P-256", coordinateBytes: 32 },
  "ecdsa-sha2-nistp384": { name: "nistp384", jwk: "P-384", coordinateBytes: 48 },
  "ecdsa-sha2-nistp521": { name: "nistp521", jwk: "P-521", coordinateBytes: 66 },
} as const;

/** Reads the length-prefixed fields of an SSH wire-format blob. */
class BlobReader {
  private offset = 0;
  constructor(private readonly blob: Buffer) {}

  bytes(): Buffer {
    if (this.offset + 4 > this.blob.length) throw new BadPublicKeyError("the key data is cut short");
    const length = this.blob.readUInt32BE(this.offset);
    const start = this.offset + 4;
    if (start + length > this.blob.length) throw new BadPublicKeyError("the key data is cut short");
    this.offset = start + length;
    return this.blob.subarray(start, start + length);
  }

  text(): string {
    return this.bytes().toString("latin1");
  }

  /** An unsigned mpint without its leading zero byte. */
  unsignedInteger(): Buffer {
    const value = this.bytes();
    if (value.length === 0 || value[0] & 0x80) throw new BadPublicKeyError("the key holds a negative or empty number");
    return value[0] === 0 ? value.subarray(1) : value;
  }

  end(): void {
    if (this.offset !== this.blob.length) throw new BadPublicKeyError("the key data has bytes after the key");
  }
}

const base64url = (bytes: Buffer) => bytes.toString("base64url");

function bitLength(value: Buffer): number {
  return value.length === 0 ? 0 : (value.length - 1) * 8 + (32 - Math.clz32(value[0]));
}

/** The key of `blob` as a JSON Web Key, for Node's crypto to import (and so check). */
function jwkOf(type: SshKeyType, reader: BlobReader): JsonWebKey {
  if (type === "ssh-ed25519") {
    const key = reader.bytes();
    if (key.length !== 32) throw new BadPublicKeyError("an Ed25519 key has 32 bytes");
    return { kty: "OKP", crv: "Ed25519", x: base64url(key) };
  }
  if (type === "ssh-rsa") {
    const exponent = reader.unsignedInteger();
    const modulus = reader.unsignedInteger();
    const bits = bitLength(modulus);
    if (bits < MIN_RSA_BITS) throw new BadPublicKeyError(`an RSA key needs at least ${MIN_RSA_BITS} bits (this one has ${bits}); ed25519 is the better choice`);
    if (bits > MAX_RSA_BITS) throw new BadPublicKeyError(`an RSA key has at most ${MAX_RSA_BITS} bits`);
    return { kty: "RSA", n: base64url(modulus), e: base64url(exponent) };
  }
  const curve = CURVES[type];
  if (reader.text() !== curve.name) throw new BadPublicKeyError(`the key's curve is not ${curve.name}`);
  const point = reader.bytes();
  if (point.length !== 1 + 2 * curve.coordinateBytes || point[0] !== 0x04) throw new BadPublicKeyError("the key's point is not an uncompressed point of its curve");
  const x = point.subarray(1, 1 + curve.coordinateBytes);
  const y = point.subarray(1 + curve.coordinateBytes);
  return { kty: "EC", crv: curve.jwk, x: base64url(x), y: base64url(y) };
}

/** Checks one public key line; throws BadPublicKeyError saying why it is refused. */
export function parsePublicKey(text: string): SshPublicKey {
  // A .pub file ends with a line break: around the line it is fine, inside it never.
  const line = text.trim();
  if (/[\u0000-\u001f\u007f]/.test(line)) throw new BadPublicKeyError("must be one line (no line breaks or control characters)");
  // Whatever follows the data is the customer's comment: dropped (the key's name is stored instead).
  const [type, data] = line.split(/ +/);
  if (!(SSH_KEY_TYPES as readonly string[]).includes(type)) {
    throw new BadPublicKeyError(
      /[=,"]/.test(type ?? "")
        ? "must be a bare key line: options such as command= or from= are not allowed"
        : `must start with the key type, one of ${SSH_KEY_TYPES.join(", ")}`,
    );
  }
  if (!data || data.length % 4 !== 0 || !BASE64.test(data)) throw new BadPublicKeyError("the key data is not base64");
  const blob = Buffer.from(data, "base64");
  const reader = new BlobReader(blob);
  if (reader.text() !== type) throw new BadPublicKeyError(`the key data is not a ${type} key`);
  const jwk = jwkOf(type as SshKeyType, reader);
  reader.end();
  try {
    createPublicKey({ key: jwk, format: "jwk" });
  } catch {
    throw new BadPublicKeyError(`the key data is not a valid ${type} key`);
  }
  const fingerprint = `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
  return { type: type as SshKeyType, data: blob.toString("base64"), fingerprint };
}
