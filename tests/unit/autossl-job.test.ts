import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { and, eq } from "drizzle-orm";
import type { Connection } from "@/db/client";
import { domainCertificates } from "@/db/schema";
import { updateAccountProfile } from "@/lib/accounts/service";
import { createAutoSslJob, type AutoSslOptions } from "@/lib/autossl/job";
import { claimSite, requestRenewal } from "@/lib/autossl/service";
import { BACKOFF_BASE_MS } from "@/lib/autossl/state";
import { createDomain, listDomains } from "@/lib/domains/service";
import { createMailDomain, listMailDomains } from "@/lib/email/service";
import { type AcmeSettings, readCertificate } from "@/lib/provisioning/acme";
import { createTestDatabase, type TestDatabase, testBackends } from "../support/database";
import { startNginx, type TestNginx } from "../support/nginx";
import { type Pebble, startPebble } from "../support/pebble";
import { seedActor, seedTenants } from "../support/seed";
import { freePort } from "../support/server";

// The AutoSSL job in process, on both backends, against pebble validating through a test nginx
// that serves the challenge directory for every name except `closed.alice.example` (404): issue
// when AutoSSL goes on, re-issue when a parked name is added, renewal by a shortened threshold,
// failure with the reason and back-off (with a clock the test moves), "Renew now", removal of
// an expired certificate once AutoSSL is off, and the lock between instances.

// The Domain record reports AutoSSL only where ACME and a web server are configured (the job gets
// its ACME settings below). Sites are written to a scratch directory and not tested: the job's
// rewrite of a site is observed through `siteChanged`, and tests/api/autossl.test.ts serves them.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "autossl-sites-"));
Object.assign(process.env, {
  ACME_DIRECTORY_URL: "https://acme.invalid/dir",
  WEB_SERVER: "nginx",
  NGINX_SITES_DIR: path.join(scratch, "nginx"),
  HOME_ROOT: path.join(scratch, "home"),
  ACCESS_LOG_DIR: path.join(scratch, "logs"),
  NGINX_TEST_COMMAND: "true",
  NGINX_RELOAD_COMMAND: "true",
  // No nginx runs here: no master whose new workers a reload would wait for.
  NGINX_PID_FILE: "/dev/null",
});

const DAY = 86_400_000;
let pebble: Pebble;
let nginx: TestNginx;
let dir: string;
let challengeDir: string;
let port: number;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "autossl-test-"));
  challengeDir = path.join(dir, "challenges");
  port = await freePort();
  nginx = await startNginx(
    `server {
    listen 127.0.0.1:${port} default_server;
    server_name _;
    location ^~ /.well-known/acme-challenge/ { root ${challengeDir}; default_type text/plain; }
    location / { return 404; }
  }
  server {
    listen 127.0.0.1:${port};
    server_name closed.alice.example;
    return 404;
  }`,
    port,
  );
  pebble = await startPebble({ httpPort: port });
});

after(async () => {
  try {
    await pebble?.stop();
  } finally {
    await nginx?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});

for (const backend of testBackends()) {
  describe(`AutoSSL job (${backend}, in process)`, () => {
    let database: TestDatabase;
    let connection: Connection;
    let seed: Awaited<ReturnType<typeof seedTenants>>;
    let settings: AcmeSettings;
    let clock = new Date();
    const rewritten: number[] = [];

    const job = (extra: Partial<AutoSslOptions> = {}) =>
      createAutoSslJob({
        db: async () => connection.db,
        settings,
        renewBeforeDays: 30,
        now: () => clock,
        siteChanged: async (_db, domainId) => void rewritten.push(domainId),
        log: () => {},
        ...extra,
      });
    const ssl = async (name: string) => (await listDomains(connection.db, seed.alice.id)).find((row) => row.domain === name)!.ssl;
    const row = async (domainId: number, kind: "site" | "mail" = "site") =>
      (await connection.db.select().from(domainCertificates).where(and(eq(domainCertificates.domainId, domainId), eq(domainCertificates.kind, kind))))[0];

    before(async () => {
      database = await createTestDatabase(backend);
      connection = await database.open();
      seed = await seedTenants(connection.db);
      settings = {
        directoryUrl: pebble.directoryUrl,
        email: null,
        caBundlePath: pebble.listenerCaPath,
        certsDir: path.join(dir, backend, "certs"),
        challengeDir,
        selfCheckPort: port,
      };
    });
    after(async () => {
      await connection?.close();
      await database?.drop();
    });

    test("nothing is issued while AutoSSL is off", async () => {
      assert.deepEqual(await job().check(), { issued: [], failed: [], removed: [] });
      assert.deepEqual(await ssl("alice.example"), { status: "off", expires_at: null, error: null });
    });

    test("turning AutoSSL on issues the domain's certificate (domain + www.) and rewrites its site", async () => {
      await updateAccountProfile(connection.db, seed.alice.id, { is_auto_ssl_enabled: true });
      assert.equal((await ssl("alice.example")).status, "pending");
      const summary = await job().check();
      assert.deepEqual(summary.issued, ["alice.example"]);
      const installed = (await readCertificate(settings.certsDir, "alice.example"))!;
      assert.deepEqual(installed.names.sort(), ["alice.example", "www.alice.example"]);
      assert.deepEqual(await ssl("alice.example"), { status: "active", expires_at: installed.expiresAt.toISOString(), error: null });
      const aliceDomainId = (await listDomains(connection.db, seed.alice.id))[0].id;
      assert.deepEqual(rewritten, [aliceDomainId]);
      // bob's AutoSSL is off: nothing for bob.
      assert.equal(await readCertificate(settings.certsDir, "bob.example"), null);
      // A second check has nothing to do.
      assert.deepEqual((await job().check()).issued, []);
    });

    test("a parked domain added later is on the re-issued certificate", async () => {
      const [main] = await listDomains(connection.db, seed.alice.id);
      await createDomain(connection.db, seed.alice.id, { domain: "alice-parked.example", domain_type: "parked", parked_on_domain_id: main.id });
      assert.equal((await ssl("alice-parked.example")).status, "pending");
      assert.deepEqual((await job().check()).issued, ["alice.example"]);
      const installed = (await readCertificate(settings.certsDir, "alice.example"))!;
      assert.deepEqual(installed.names.sort(), ["alice-parked.example", "alice.example", "www.alice.example"]);
      assert.equal((await ssl("alice-parked.example")).status, "active");
    });

    test("renewal: a certificate within the threshold of its expiry is issued again", async () => {
      const chain = () => fs.readFileSync(path.join(settings.certsDir, "alice.example", "fullchain.pem"), "utf8");
      const before = (await readCertificate(settings.certsDir, "alice.example"))!;
      const previous = chain();
      const daysLeft = (before.expiresAt.getTime() - clock.getTime()) / DAY;
      assert.deepEqual((await job({ renewBeforeDays: Math.floor(daysLeft) - 1 }).check()).issued, []);
      assert.deepEqual((await job({ renewBeforeDays: Math.ceil(daysLeft) + 1 }).check()).issued, ["alice.example"]);
      assert.notEqual(chain(), previous);
    });

    test("a failed validation records the reason, keeps nothing half-done and backs off", async () => {
      const [main] = await listDomains(connection.db, seed.alice.id);
      const closed = await createDomain(connection.db, seed.alice.id, { domain: "closed", domain_type: "subdomain", parent_domain_id: main.id });
      const first = await job().check();
      assert.deepEqual(first.failed, ["closed.alice.example"]);
      const failed = await ssl("closed.alice.example");
      assert.equal(failed.status, "failed");
      assert.match(failed.error!, /closed\.alice\.example: the web server does not serve the ACME challenge/);
      assert.equal(await readCertificate(settings.certsDir, "closed.alice.example"), null);
      let state = await row(closed.id);
      assert.equal(state.failures, 1);
      assert.equal(state.nextAttemptAt!.getTime(), clock.getTime() + BACKOFF_BASE_MS);

      // Within the back-off nothing is tried; after it, once more, and the wait doubles.
      assert.deepEqual((await job().check()).failed, []);
      clock = new Date(clock.getTime() + BACKOFF_BASE_MS + 1000);
      assert.deepEqual((await job().check()).failed, ["closed.alice.example"]);
      state = await row(closed.id);
      assert.equal(state.failures, 2);
      assert.equal(state.nextAttemptAt!.getTime(), clock.getTime() + 2 * BACKOFF_BASE_MS);

      // "Renew now" forgets the back-off: the next check tries at once.
      await requestRenewal(connection.db, seed.alice.id, closed.id, seedActor);
      assert.equal((await ssl("closed.alice.example")).status, "pending");
      assert.deepEqual((await job().check()).failed, ["closed.alice.example"]);
      assert.equal((await row(closed.id)).failures, 1);
      // The site that works was left alone throughout.
      assert.equal((await ssl("alice.example")).status, "active");
    });

    test("'Renew now' re-issues a valid certificate", async () => {
      const [main] = await listDomains(connection.db, seed.alice.id);
      await requestRenewal(connection.db, seed.alice.id, main.id, seedActor);
      assert.deepEqual((await job().check()).issued, ["alice.example"]);
      assert.equal((await row(main.id)).renewRequested, false);
      await assert.rejects(requestRenewal(connection.db, seed.bob.id, main.id, seedActor), /not found/i);
    });

    test("one instance issues a site at a time (the lock is a lease on its row)", async () => {
      const [main] = await listDomains(connection.db, seed.alice.id);
      assert.ok(await claimSite(connection.db, { domainId: main.id, kind: "site" }));
      assert.equal(await claimSite(connection.db, { domainId: main.id, kind: "site" }), null);
      await requestRenewal(connection.db, seed.alice.id, main.id, seedActor);
      assert.deepEqual((await job().check()).issued, [], "another instance holds the site");
      await connection.db.update(domainCertificates).set({ issuingUntil: null }).where(eq(domainCertificates.domainId, main.id));
      assert.deepEqual((await job().check()).issued, ["alice.example"]);
    });

    test("a mail domain's host name gets a certificate of its own (mail.<domain> alone), the site's untouched; the next check leaves both", async () => {
      const [main] = await listDomains(connection.db, seed.alice.id);
      const siteBefore = await readCertificate(settings.certsDir, "alice.example");
      await createMailDomain(connection.db, seed.alice.id, { domain: "alice.example" });
      assert.deepEqual((await job().check()).issued, ["mail.alice.example"]);
      assert.deepEqual((await readCertificate(settings.certsDir, "mail.alice.example"))?.names, ["mail.alice.example"]);
      assert.deepEqual(await readCertificate(settings.certsDir, "alice.example"), siteBefore, "the site's certificate is untouched");
      assert.equal((await row(main.id, "mail")).status, "active");
      assert.equal((await row(main.id, "site")).status, "active");
      assert.equal((await listMailDomains(connection.db, seed.alice.id))[0].ssl.status, "active");
      assert.deepEqual(await job().check(), { issued: [], failed: [], removed: [] });
    });

    test("AutoSSL off: no renewals; an expired certificate is taken out of service; orphans go", async () => {
      await updateAccountProfile(connection.db, seed.alice.id, { is_auto_ssl_enabled: false });
      const installed = (await readCertificate(settings.certsDir, "alice.example"))!;
      assert.deepEqual((await job({ renewBeforeDays: 100_000 }).check()).issued, []);
      assert.equal((await ssl("alice.example")).status, "active", "the certificate stays until it expires");

      fs.mkdirSync(path.join(settings.certsDir, "gone.example"));
      clock = new Date(installed.expiresAt.getTime() + 1000);
      const summary = await job().check();
      assert.deepEqual(summary.removed.sort(), ["alice.example", "gone.example", "mail.alice.example"]);
      assert.equal(await readCertificate(settings.certsDir, "alice.example"), null);
      assert.ok(!fs.existsSync(path.join(settings.certsDir, "gone.example")));
      assert.deepEqual(await ssl("alice.example"), { status: "off", expires_at: null, error: null });
    });
  });
}
