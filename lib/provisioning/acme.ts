import { randomBytes, X509Certificate } from "node:crypto";
import fs from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import * as acme from "acme-client";
import { makeDirectories, writeAtomically } from "./system";

// Certificates by ACME HTTP-01 (acme-client's lower-level calls, not its auto(): auto() first
// fetches each challenge itself on port 80 through the system resolver, which is not where the
// panel's web server answers in tests and not necessarily on a server behind NAT).
//
// Files under CERTS_DIR:
//   .acme/account.key          the ACME account key (0600). Kept as a file beside the
//                              certificates' keys rather than in the database: one place holds
//                              every secret of TLS, backed up and restricted together, and the
//                              panel never has to hand a database row to the web server. The CA
//                              finds the account by this key, so no account URL is stored.
//   <domain>/fullchain.pem     certificate + chain, as nginx's ssl_certificate wants it
//   <domain>/privkey.pem       its key (0600)
// ".acme" cannot collide with a domain (a host name never starts with a dot).

export interface AcmeSettings {
  directoryUrl: string;
  /** The account's contact (the CA's expiry and policy mail); none when null. */
  email: string | null;
  /** A PEM file of extra CAs to trust for the directory's TLS (tests: pebble's listener). */
  caBundlePath: string | null;
  certsDir: string;
  /** The root every server block serves /.well-known/acme-challenge/ from. */
  challengeDir: string;
  /**
   * The local web server's HTTP port: each challenge file is fetched there (with the name as
   * Host) before the CA is asked, so a site that cannot answer fails here, not at the CA, whose
   * failed-validation limits are real. Null skips the check.
   */
  selfCheckPort: number | null;
}

export interface CertificateFiles {
  certificatePath: string;
  keyPath: string;
}

export interface InstalledCertificate {
  names: string[];
  expiresAt: Date;
}

/** Where a domain's certificate and key live (whether or not they exist yet). */
export function certificateFiles(certsDir: string, domain: string): CertificateFiles {
  return {
    certificatePath: path.join(/* turbopackIgnore: true */ certsDir, domain, "fullchain.pem"),
    keyPath: path.join(/* turbopackIgnore: true */ certsDir, domain, "privkey.pem"),
  };
}

/** The certificate installed for `domain`: its names and expiry, or null when there is none. */
export async function readCertificate(certsDir: string, domain: string): Promise<InstalledCertificate | null> {
  let pem: string;
  try {
    pem = await fs.readFile(certificateFiles(certsDir, domain).certificatePath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  return describe(pem);
}

/** Removes a domain's certificate and key (domain deleted, account terminated); no-op when absent. */
export async function removeCertificate(certsDir: string, domain: string): Promise<void> {
  // A recursive delete: never of CERTS_DIR itself or anything outside one domain's folder.
  if (!/^[a-z0-9][a-z0-9.-]*\.[a-z0-9-]+$/.test(domain)) throw new Error(`not a domain name: ${JSON.stringify(domain)}`);
  await fs.rm(path.join(/* turbopackIgnore: true */ certsDir, domain), { recursive: true, force: true });
}

function describe(pem: string): InstalledCertificate {
  const leaf = new X509Certificate(pem);
  const names = (leaf.subjectAltName ?? "")
    .split(", ")
    .filter((entry) => entry.startsWith("DNS:"))
    .map((entry) => entry.slice(4));
  return { names, expiresAt: new Date(leaf.validTo) };
}

/** A failure the admin can act on; `message` is shown on the Domain record as `ssl.error`. */
export class AcmeError extends Error {}

/**
 * Orders a certificate for `names` (the first is the common name), answers the HTTP-01
 * challenges from the challenge directory, and installs the result under CERTS_DIR/<domain>/.
 * The previous certificate stays in place until the new one is complete.
 */
export async function issueCertificate(
  settings: AcmeSettings,
  site: { domain: string; names: string[] },
): Promise<InstalledCertificate> {
  const client = new acme.Client({
    directoryUrl: settings.directoryUrl,
    accountKey: await accountKey(settings.certsDir),
    // acme-client polls pending orders from 5 s up; validation usually completes within a second.
    backoffMin: 500,
    backoffMax: 10_000,
    backoffAttempts: 12,
  });
  await trustCaBundle(settings.caBundlePath);
  // Registers the key, or finds its account (then updates the contact: an empty update is refused).
  await client.createAccount({ termsOfServiceAgreed: true, contact: settings.email ? [`mailto:${settings.email}`] : [] });

  const order = await client.createOrder({ identifiers: site.names.map((value) => ({ type: "dns", value })) });
  const written: string[] = [];
  try {
    for (const authorization of await client.getAuthorizations(order)) {
      if (authorization.status === "valid") continue;
      const name = authorization.identifier.value;
      const challenge = authorization.challenges.find((candidate) => candidate.type === "http-01");
      if (!challenge) throw new AcmeError(`${name}: the CA offers no HTTP-01 challenge`);
      const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
      const file = path.join(/* turbopackIgnore: true */ settings.challengeDir, ".well-known", "acme-challenge", challenge.token);
      // nginx's workers serve the token (public by design: the CA fetches it over plain HTTP);
      // modes set explicitly, the panel's umask being 0077.
      await makeDirectories(path.dirname(file), 0o755);
      await fs.writeFile(file, keyAuthorization);
      await fs.chmod(file, 0o644);
      written.push(file);
      if (settings.selfCheckPort !== null) await selfCheck(settings.selfCheckPort, name, challenge.token, keyAuthorization);
      await client.completeChallenge(challenge);
      try {
        await client.waitForValidStatus(authorization);
      } catch (error) {
        throw new AcmeError(`${name}: validation failed: ${await challengeError(client, order, name) ?? (error as Error).message}`);
      }
    }
    const [key, csr] = await acme.crypto.createCsr(
      { commonName: site.names[0], altNames: site.names },
      await acme.crypto.createPrivateEcdsaKey("P-256"),
    );
    const finalized = await client.finalizeOrder(order, csr);
    const chain = await client.getCertificate(finalized);
    await install(settings.certsDir, site.domain, chain, key.toString());
    return describe(chain);
  } finally {
    await Promise.all(written.map((file) => fs.rm(file, { force: true })));
  }
}

/** The CA's reason for rejecting `name`'s challenge (its `error.detail`), when it gives one. */
async function challengeError(client: acme.Client, order: acme.Order, name: string): Promise<string | null> {
  try {
    const authorization = (await client.getAuthorizations(order)).find((entry) => entry.identifier.value === name);
    const problem = authorization?.challenges.find((challenge) => challenge.error)?.error as { detail?: string } | undefined;
    return problem?.detail ?? null;
  } catch {
    return null;
  }
}

async function accountKey(certsDir: string): Promise<Buffer> {
  const file = path.join(/* turbopackIgnore: true */ certsDir, ".acme", "account.key");
  try {
    return await fs.readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const key = await acme.crypto.createPrivateEcdsaKey("P-256");
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeAtomically(file, key.toString(), 0o600);
  // Another instance may have raced us to it: whichever rename landed last is the key.
  return fs.readFile(file);
}

// acme-client talks through its own axios instance; the CA bundle is process-wide (one directory).
let trustedBundle: string | null = null;
async function trustCaBundle(bundlePath: string | null) {
  if (bundlePath === trustedBundle) return;
  acme.axios.defaults.httpsAgent = bundlePath ? new https.Agent({ ca: await fs.readFile(bundlePath) }) : undefined;
  trustedBundle = bundlePath;
}

/** Fetches the challenge as the CA will (by name, on the HTTP port), retrying briefly for a reload. */
async function selfCheck(port: number, name: string, token: string, expected: string) {
  let last = "";
  for (let attempt = 0; attempt < 10; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 300));
    try {
      const body = await httpGet(port, name, `/.well-known/acme-challenge/${token}`);
      if (body.status === 200 && body.text.trim() === expected) return;
      last = `answered ${body.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
  }
  throw new AcmeError(`${name}: the web server does not serve the ACME challenge (http://${name}/.well-known/acme-challenge/ ${last})`);
}

function httpGet(port: number, host: string, pathname: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      { host: "127.0.0.1", port, path: pathname, headers: { host }, timeout: 5000 },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (text += chunk.slice(0, 4096)));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    request.on("timeout", () => request.destroy(new Error("timed out")));
    request.on("error", reject);
  });
}

async function install(certsDir: string, domain: string, chain: string, key: string) {
  const files = certificateFiles(certsDir, domain);
  await fs.mkdir(path.dirname(files.certificatePath), { recursive: true, mode: 0o700 });
  // Both files are written whole beside the old ones first, then renamed over them, so a failed
  // write leaves the previous pair in place; the web server reads them on the reload after both.
  const staged = [
    // Both read by nginx's master only (root).
    { file: files.keyPath, content: key, mode: 0o600 },
    { file: files.certificatePath, content: chain, mode: 0o600 },
  ].map((entry) => ({ ...entry, temporary: `${entry.file}.${randomBytes(6).toString("hex")}.tmp` }));
  try {
    for (const { temporary, content, mode } of staged) {
      // Synced before the renames, so a crash right after them leaves a whole pair, not empty files.
      const handle = await fs.open(temporary, "wx", mode);
      try {
        await handle.writeFile(content);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }
    for (const { temporary, file } of staged) await fs.rename(temporary, file);
  } catch (error) {
    await Promise.all(staged.map(({ temporary }) => fs.rm(temporary, { force: true })));
    throw error;
  }
}
