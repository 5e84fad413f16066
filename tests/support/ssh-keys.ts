import { createHash, generateKeyPairSync } from "node:crypto";

// OpenSSH public keys for tests, made without ssh-keygen (hundreds of them in a second).

/** A fresh ed25519 public key line: "ssh-ed25519 AAAA…". */
export function ed25519KeyLine(): string {
  const raw = generateKeyPairSync("ed25519").publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  const blob = Buffer.concat([Buffer.from([0, 0, 0, 11]), Buffer.from("ssh-ed25519"), Buffer.from([0, 0, 0, 32]), raw]);
  return `ssh-ed25519 ${blob.toString("base64")}`;
}

/** The SHA256 fingerprint of a key line, as `ssh-keygen -l` prints it. */
export function fingerprintOf(line: string): string {
  const blob = Buffer.from(line.split(" ")[1], "base64");
  return `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
}
