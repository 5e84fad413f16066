import fs from "node:fs/promises";
import path from "node:path";
import { createUser, fromSeed } from "@nats-io/nkeys";

// An NKEY user's key pair, kept as its seed in a file of its own (0600, in a 0700 directory).
// The seed is the credential: it never leaves the machine that made it; only the public key
// ("U…") is handed to the panel (a node's, by `panel node join`) or to the NATS server.

export interface NkeyIdentity {
  seed: Uint8Array;
  publicKey: string;
}

/** The key pair whose seed `file` holds; made (and written, 0600) when the file does not exist. */
export async function loadOrCreateIdentity(file: string): Promise<NkeyIdentity> {
  const existing = await fs.readFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return null;
    throw error;
  });
  if (existing) {
    const seed = new Uint8Array(existing.subarray(0, existing.indexOf(10) === -1 ? existing.length : existing.indexOf(10)));
    return { seed, publicKey: fromSeed(seed).getPublicKey() };
  }
  const user = createUser();
  const seed = user.getSeed();
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  // wx: never over a file (or a link) someone else put there meanwhile.
  await fs.writeFile(file, Buffer.concat([Buffer.from(seed), Buffer.from("\n")]), { flag: "wx", mode: 0o600 });
  return { seed, publicKey: user.getPublicKey() };
}
