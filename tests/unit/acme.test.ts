import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { type AcmeSettings, certificateFiles, issueCertificate, localMachine, readCertificate, removeCertificate } from "@/lib/provisioning/acme";
import { startNginx, type TestNginx } from "../support/nginx";
import { type Pebble, startPebble } from "../support/pebble";
import { freePort } from "../support/server";

// lib/provisioning/acme.ts against a real ACME server (pebble) validating through a real nginx
// that serves the challenge directory for every name, as the panel's server blocks do.

let pebble: Pebble;
let nginx: TestNginx;
let settings: AcmeSettings;
let dir: string;
const challengeFiles = () => fs.readdirSync(path.join(settings.challengeDir, ".well-known", "acme-challenge"));

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "acme-test-"));
  const port = await freePort();
  const challengeDir = path.join(dir, "challenges");
  nginx = await startNginx(
    `server {
    listen 127.0.0.1:${port} default_server;
    server_name _;
    location ^~ /.well-known/acme-challenge/ { root ${challengeDir}; default_type text/plain; }
    location / { return 404; }
  }
  server {
    listen 127.0.0.1:${port};
    server_name closed.example;
    return 404;
  }`,
    port,
  );
  pebble = await startPebble({ httpPort: port });
  settings = {
    directoryUrl: pebble.directoryUrl,
    email: "admin@panel.example",
    caBundlePath: pebble.listenerCaPath,
    certsDir: path.join(dir, "certs"),
    challengeDir,
    selfCheckPort: port,
  };
});

after(async () => {
  try {
    await pebble?.stop();
  } finally {
    await nginx?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a certificate is issued for every name and installed with a private key only the panel reads", async () => {
  const names = ["alice.example", "www.alice.example", "alice-parked.example"];
  const issued = await issueCertificate(settings, localMachine(settings), { domain: "alice.example", names });
  assert.deepEqual([...issued.names].sort(), [...names].sort());
  assert.ok(issued.expiresAt.getTime() > Date.now() + 86_400_000);

  const files = certificateFiles(settings.certsDir, "alice.example");
  assert.equal(fs.statSync(files.keyPath).mode & 0o777, 0o600);
  assert.equal(fs.statSync(path.join(settings.certsDir, ".acme", "account.key")).mode & 0o777, 0o600);
  assert.match(fs.readFileSync(files.certificatePath, "utf8"), /^-----BEGIN CERTIFICATE-----/);
  assert.deepEqual(await readCertificate(settings.certsDir, "alice.example"), issued);
  // The challenge files are gone once the order is done.
  assert.deepEqual(challengeFiles(), []);
  // Issued by pebble's root (and the key matches the certificate).
  const { X509Certificate, createPrivateKey } = await import("node:crypto");
  const leaf = new X509Certificate(fs.readFileSync(files.certificatePath));
  assert.ok(leaf.checkPrivateKey(createPrivateKey(fs.readFileSync(files.keyPath))));
  const root = new X509Certificate(pebble.issuanceRoot);
  const chain = fs.readFileSync(files.certificatePath, "utf8").split(/(?<=-----END CERTIFICATE-----)\n?/).filter((pem) => pem.trim());
  const top = new X509Certificate(chain[chain.length - 1]);
  assert.ok(top.verify(root.publicKey));

  await removeCertificate(settings.certsDir, "alice.example");
  assert.equal(await readCertificate(settings.certsDir, "alice.example"), null);
});

test("a name whose challenge the web server does not serve fails before the CA is asked", async () => {
  await assert.rejects(
    issueCertificate(settings, localMachine(settings), { domain: "closed.example", names: ["closed.example"] }),
    /closed\.example: the web server does not serve the ACME challenge .*answered 404/,
  );
  assert.deepEqual(challengeFiles(), []);
});

test("a validation the CA cannot complete fails with the CA's reason and installs nothing", async () => {
  // The CA is sent where nothing listens (the test nginx listens on 127.0.0.1 only).
  await pebble.resolve("broken.example", "127.0.0.2");
  const withoutCheck = { ...settings, selfCheckPort: null };
  await assert.rejects(
    issueCertificate(withoutCheck, localMachine(withoutCheck), { domain: "broken.example", names: ["broken.example"] }),
    /broken\.example: validation failed: .*127\.0\.0\.2.*connection refused$/,
  );
  assert.equal(await readCertificate(settings.certsDir, "broken.example"), null);
  assert.deepEqual(challengeFiles(), []);
});
