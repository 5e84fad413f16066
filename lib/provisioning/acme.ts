import { createPrivateKey, X509Certificate } from "node:crypto";
import fs from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import path from "node:path";
import type * as Acme from "acme-client";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { reloadNginx } from "./nginx";
import { makeDirectories, readIfExists, writeAtomically } from "./system";

/**
 * acme-client, loaded when a certificate is first ordered or requested: it takes about half a
 * second to load, which every command and test process importing this module would pay otherwise.
 */
const loadAcme = () => import("acme-client");

// Certificates by ACME HTTP-01 (acme-client's lower-level calls, not its auto(): auto() first
// fetches each challenge itself on port 80 through the system resolver, which is not where the
// web server answers in tests and not necessarily on a server behind NAT).
//
// Two sides (docs/nodes.md "AutoSSL on nodes"): the panel talks to the CA with its ACME account
// (issueCertificate); the machine that serves the site — the panel's own, or a node through its
// queue — answers the challenges from its web server and makes the certificate's key, which never
// leaves it: it hands out a certificate signing request, and takes back only the chain the CA
// signed (a CertificateMachine; localMachine is the implementation on this machine).
//
// Files under CERTS_DIR:
//   .acme/account.key          the ACME account key (0600), on the panel's machine. Kept as a
//                              file beside the certificates' keys rather than in the database: one
//                              place holds every secret of TLS, backed up and restricted together.
//                              The CA finds the account by this key, so no account URL is stored.
//   <domain>/fullchain.pem     certificate + chain, as nginx's ssl_certificate wants it
//   <domain>/privkey.pem       its key (0600)
//   <domain>/request.key       the key of a certificate being ordered (0600), privkey.pem once
//                              its certificate is installed
// ".acme" cannot collide with a domain (a host name never starts with a dot).

/** Where the machine that serves the sites keeps their certificates and answers the challenges. */
export interface TlsFiles {
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

/** The panel's ACME account (its key under certsDir/.acme) and, for its own machine, its TlsFiles. */
export interface AcmeSettings extends TlsFiles {
  directoryUrl: string;
  /** The account's contact (the CA's expiry and policy mail); none when null. */
  email: string | null;
  /** A PEM file of extra CAs to trust for the directory's TLS (tests: pebble's listener). */
  caBundlePath: string | null;
}

/** This machine's TlsFiles, from its configuration (a node's agent, the panel's job). */
export function tlsFilesFromEnv(): TlsFiles {
  const config = env();
  return { certsDir: config.certsDir, challengeDir: config.acmeChallengeDir, selfCheckPort: config.webHttpPort };
}

export interface CertificateFiles {
  certificatePath: string;
  keyPath: string;
}

export interface InstalledCertificate {
  names: string[];
  expiresAt: Date;
}

/** A host name as a certificate and a folder of CERTS_DIR may carry one. */
const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$/;
/** An HTTP-01 token and its key authorization (base64url, RFC 8555 8.1 and 8.3). */
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;
const KEY_AUTHORIZATION = /^[A-Za-z0-9_-]{1,256}\.[A-Za-z0-9_-]{1,256}$/;

/** Checked where it becomes a path or a certificate's name, whoever sent it. */
function checked(what: string, value: unknown, pattern: RegExp): string {
  if (typeof value !== "string" || value.length > 513 || !pattern.test(value)) throw new AcmeError(`not ${what}: ${JSON.stringify(value)?.slice(0, 80)}`);
  return value;
}

/** Where a domain's certificate and key live (whether or not they exist yet). */
export function certificateFiles(certsDir: string, domain: string): CertificateFiles {
  const dir = path.join(/* turbopackIgnore: true */ certsDir, checked("a domain name", domain, HOST_NAME));
  return { certificatePath: path.join(dir, "fullchain.pem"), keyPath: path.join(dir, "privkey.pem") };
}

const requestKeyPath = (certsDir: string, domain: string) => path.join(/* turbopackIgnore: true */ certsDir, checked("a domain name", domain, HOST_NAME), "request.key");

/** The certificate installed for `domain`: its names and expiry, or null when there is none. */
export async function readCertificate(certsDir: string, domain: string): Promise<InstalledCertificate | null> {
  const pem = await readIfExists(certificateFiles(certsDir, domain).certificatePath);
  return pem === null ? null : describe(pem);
}

/** Removes a domain's certificate and key (domain deleted, account terminated); no-op when absent. */
export async function removeCertificate(certsDir: string, domain: string): Promise<void> {
  // A recursive delete: never of CERTS_DIR itself or anything outside one domain's folder.
  await fs.rm(path.dirname(certificateFiles(certsDir, domain).certificatePath), { recursive: true, force: true });
}

function describe(pem: string): InstalledCertificate {
  const leaf = new X509Certificate(pem);
  const names = (leaf.subjectAltName ?? "")
    .split(", ")
    .filter((entry) => entry.startsWith("DNS:"))
    .map((entry) => entry.slice(4));
  return { names, expiresAt: new Date(leaf.validTo) };
}

/**
 * A failure the admin can act on; `message` is shown on the Domain record as `ssl.error`. A
 * refusal in the panel's own words, so a node's reaches the panel whole (lib/agent/main.ts).
 */
export class AcmeError extends AppError {
  constructor(message: string) {
    super("VALIDATION", message);
  }
}

/** The machine that serves a site, as a certificate for it needs it. */
export interface CertificateMachine {
  /** The certificates there by domain (null: a folder without one): of `domains`, or every folder of CERTS_DIR. */
  certificates(domains?: string[]): Promise<Map<string, InstalledCertificate | null>>;
  /** A certificate signing request (PEM) for `names`; its key stays on the machine, waiting for the certificate. */
  request(domain: string, names: string[]): Promise<string>;
  /** Serves a challenge's key authorization, and checks its web server answers it for `name` as the CA will ask. */
  answerChallenge(name: string, token: string, keyAuthorization: string): Promise<void>;
  removeChallenges(tokens: string[]): Promise<void>;
  /** Installs the chain the CA signed for the key waiting there. */
  install(domain: string, chain: string): Promise<InstalledCertificate>;
  remove(domains: string[]): Promise<void>;
  /**
   * Has its web server load the certificates as they are now (when it has one: WEB_SERVER):
   * nginx reads them only when it loads, and a renewed one at the same path changes no server
   * block. Its mail servers too (MAIL_SERVER): Postfix's and Dovecot's certificates by name.
   */
  reload(): Promise<void>;
}

/**
 * Orders a certificate for `site.names` (the first is the common name) with the panel's account:
 * `machine` answers the HTTP-01 challenges and makes the key and its request, then installs the
 * chain under its CERTS_DIR/<domain>/. The previous certificate stays in place until the new one
 * is complete.
 */
export async function issueCertificate(
  settings: AcmeSettings,
  machine: CertificateMachine,
  site: { domain: string; names: string[] },
): Promise<InstalledCertificate> {
  const acme = await loadAcme();
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
  const tokens: string[] = [];
  try {
    for (const authorization of await client.getAuthorizations(order)) {
      if (authorization.status === "valid") continue;
      const name = authorization.identifier.value;
      const challenge = authorization.challenges.find((candidate) => candidate.type === "http-01");
      if (!challenge) throw new AcmeError(`${name}: the CA offers no HTTP-01 challenge`);
      tokens.push(challenge.token);
      await machine.answerChallenge(name, challenge.token, await client.getChallengeKeyAuthorization(challenge));
      await client.completeChallenge(challenge);
      try {
        await client.waitForValidStatus(authorization);
      } catch (error) {
        throw new AcmeError(`${name}: validation failed: ${await challengeError(client, order, name) ?? (error as Error).message}`);
      }
    }
    const finalized = await client.finalizeOrder(order, await machine.request(site.domain, site.names));
    return await machine.install(site.domain, await client.getCertificate(finalized));
  } finally {
    // Public by design (the CA fetches them over plain HTTP): one left behind by a machine that
    // stopped answering harms nothing, so its failure is only logged.
    if (tokens.length) await machine.removeChallenges(tokens).catch((error) => console.error("[acme] challenges not removed:", (error as Error).message));
  }
}

/** The CA's reason for rejecting `name`'s challenge (its `error.detail`), when it gives one. */
async function challengeError(client: Acme.Client, order: Acme.Order, name: string): Promise<string | null> {
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
  const key = await (await loadAcme()).crypto.createPrivateEcdsaKey("P-256");
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeAtomically(file, key.toString(), 0o600);
  // Another instance may have raced us to it: whichever rename landed last is the key.
  return fs.readFile(file);
}

// acme-client talks through its own axios instance; the CA bundle is process-wide (one directory).
let trustedBundle: string | null = null;
async function trustCaBundle(bundlePath: string | null) {
  if (bundlePath === trustedBundle) return;
  (await loadAcme()).axios.defaults.httpsAgent = bundlePath ? new https.Agent({ ca: await fs.readFile(bundlePath) }) : undefined;
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

/**
 * The mail servers serve CERTS_DIR/mail.<domain>/ by name (docs/email.md "TLS"): they follow every
 * change of this machine's certificates. Imported when called: ./mail imports this module.
 */
async function refreshMailCertificates(): Promise<void> {
  const mail = await import("./mail");
  await mail.refreshMailCertificates();
}

/**
 * This machine's side of its sites' certificates: `files` says where they are and which port its
 * web server answers challenges on.
 */
export function localMachine(files: TlsFiles): CertificateMachine {
  const challengeFile = (token: string) =>
    path.join(/* turbopackIgnore: true */ files.challengeDir, ".well-known", "acme-challenge", checked("an ACME token", token, TOKEN));
  return {
    async certificates(domains) {
      const listed =
        domains ??
        (await fs.readdir(files.certsDir, { withFileTypes: true }).catch(() => []))
          // Only domains' folders: not .acme, nor anything an administrator put there by hand.
          .filter((entry) => entry.isDirectory() && HOST_NAME.test(entry.name))
          .map((entry) => entry.name);
      const found = new Map<string, InstalledCertificate | null>();
      for (const domain of listed) found.set(domain, await readCertificate(files.certsDir, domain));
      return found;
    },

    async request(domain, names) {
      if (!Array.isArray(names) || names.length === 0 || names.length > 100) throw new AcmeError(`${domain}: no names to certify`);
      for (const name of names) checked("a host name", name, HOST_NAME);
      const acme = await loadAcme();
      const keyFile = requestKeyPath(files.certsDir, domain);
      // A request made again (a job delivered twice, an order retried) reuses the key waiting.
      let key = await readIfExists(keyFile);
      if (key === null) {
        await fs.mkdir(path.dirname(keyFile), { recursive: true, mode: 0o700 });
        key = (await acme.crypto.createPrivateEcdsaKey("P-256")).toString();
        await writeAtomically(keyFile, key, 0o600);
      }
      const [, csr] = await acme.crypto.createCsr({ commonName: names[0], altNames: names }, key);
      return csr.toString();
    },

    async answerChallenge(name, token, keyAuthorization) {
      checked("a host name", name, HOST_NAME);
      const file = challengeFile(token);
      // nginx's workers serve the token; modes set explicitly, the panel's umask being 0077.
      await makeDirectories(path.dirname(file), 0o755);
      await writeAtomically(file, checked("a key authorization", keyAuthorization, KEY_AUTHORIZATION), 0o644);
      if (files.selfCheckPort !== null) await selfCheck(files.selfCheckPort, name, token, keyAuthorization);
    },

    async removeChallenges(tokens) {
      await Promise.all(tokens.map((token) => fs.rm(challengeFile(token), { force: true })));
    },

    async install(domain, chain) {
      const target = certificateFiles(files.certsDir, domain);
      const keyFile = requestKeyPath(files.certsDir, domain);
      let leaf: X509Certificate;
      try {
        if (typeof chain !== "string" || chain.length > 65_536) throw new Error("not a chain");
        leaf = new X509Certificate(chain);
      } catch {
        throw new AcmeError(`${domain}: what came back from the CA is not a certificate`);
      }
      // The key waiting for it; or, for an install made again, the key already in place.
      const waiting = await readIfExists(keyFile);
      const key = waiting ?? (await readIfExists(target.keyPath));
      if (key === null || !leaf.checkPrivateKey(createPrivateKey(key))) throw new AcmeError(`${domain}: the certificate is not for the key made here`);
      // The key takes its place first, then the chain (both read by nginx's master only: root);
      // nginx reads the pair on the reload after both.
      if (waiting !== null) await fs.rename(keyFile, target.keyPath);
      await writeAtomically(target.certificatePath, chain, 0o600);
      return describe(chain);
    },

    async remove(domains) {
      for (const domain of domains) await removeCertificate(files.certsDir, domain);
      // Dovecot must not be left naming a file that is gone.
      await refreshMailCertificates();
    },

    async reload() {
      if (env().webServer !== null) await reloadNginx();
      await refreshMailCertificates();
    },
  };
}
