import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { type AcmeSites, startAcmeSites } from "../support/acme-sites";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { type MailServers, startMailServers } from "../support/mail-servers";
import { makeKey } from "../support/seed";
import { tlsVerifies } from "../support/tls";
import { waitFor } from "../support/wait";
import { removeLinuxUsers } from "../support/web-servers";

// From AutoSSL to the mail servers in one run (docs/email.md "TLS"): an account with AutoSSL on
// makes a mail domain; AutoSSL has pebble issue mail.<domain> (validated through the test nginx
// that serves the panel's sites) and installs it on the machine, and from that install alone —
// no mail change after it — Postfix and Dovecot present it by SNI: a client asking for
// mail.<domain> on IMAPS, POP3S, SMTPS and submission (STARTTLS) gets a chain pebble's root
// vouches for, while another name still gets the machine's own certificate. The halves are
// tested on their own too: AutoSSL's issuing in tests/api/autossl.test.ts, the servers from a
// certificate already present in tests/api/email-delivery.test.ts.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-email-autossl-"));
fs.chmodSync(root, 0o755);
const username = `ea${randomBytes(4).toString("hex")}`;
const domain = `${username}.example`;
let acme: AcmeSites;
let mail: MailServers;

before(async () => {
  [acme, mail] = await Promise.all([startAcmeSites(), startMailServers(root)]);
});
after(async () => {
  removeLinuxUsers([username]);
  await Promise.all([acme?.stop(), mail?.stop()]);
  fs.rmSync(root, { recursive: true, force: true });
});

const seed = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });

// One backend: what is tested is the machine's servers.
for (const backend of machineBackends("pglite")) {
  describe(`a mail host's certificate from AutoSSL to the mail servers (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    let accountId = 0;

    before(async () => {
      env = await createEnvironment(backend, seed, { ...acme.env, ...mail.env, SYSTEM_USERS: "1", CERTS_DIR: path.join(root, "certs"), ZONES_DIR: path.join(root, "zones") });
    });
    after(async () => {
      await env?.teardown();
    });
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const client = () => apiClient(env.server.baseUrl, env.seed.adminKey, accountId);

    test("AutoSSL's certificate for mail.<domain> is what IMAPS, POP3S, SMTPS and submission present for that name, verified through pebble's root; another name gets the machine's", async () => {
      const created = await admin().post("/api/admin/accounts", { username, domain, plan: "default" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      accountId = created.body.id;
      const mailHost = `mail.${domain}`;
      // pebble's root, which issues for this run, as the file openssl verifies against.
      const pebbleRoot = path.join(root, "pebble-root.pem");
      fs.writeFileSync(pebbleRoot, acme.pebble.issuanceRoot);
      // Before: no certificate of its own, so the machine's.
      assert.equal((await client().post("/api/client/email/mailboxes", { address: `info@${domain}`, password: "a mailbox password", quota_mb: 10 })).status, 201);
      assert.equal(await tlsVerifies(mail.imapsPort, mailHost, pebbleRoot), false);

      assert.equal((await client().put("/api/client/account", { is_auto_ssl_enabled: true })).status, 200);
      await waitFor("the mail host's certificate from AutoSSL", async () => {
        const [mailDomain] = (await client().get("/api/client/email/domains")).body;
        assert.notEqual(mailDomain.ssl.status, "failed", mailDomain.ssl.error);
        return mailDomain.ssl.status === "active";
      }, 60_000);
      // Postfix and Dovecot take the new files at their reload, which the install asked for.
      const maps = mail.env.MAIL_MAPS_DIR;
      const facts = () =>
        [`sni: ${fs.readFileSync(path.join(maps, "sni"), "utf8")}`, `dovecot-sni.conf: ${fs.readFileSync(path.join(maps, "dovecot-sni.conf"), "utf8")}`, env.server.output().slice(-2000), mail.logs().split("\n--- rspamd")[0].slice(-2000)].join("\n");
      for (const [port, starttls] of [[mail.imapsPort], [mail.pop3sPort], [mail.smtpsPort], [mail.submissionPort, "smtp"]] as const) {
        await waitFor(`port ${port} to show ${mailHost}'s certificate from pebble`, () => tlsVerifies(port, mailHost, pebbleRoot, mailHost, starttls), 10_000).catch((error: Error) => {

          throw new Error(`${error.message}\n${facts()}`);
        });
      }
      assert.equal(await tlsVerifies(mail.imapsPort, `mail.other-${domain}`, mail.tlsCert, "mail.panel-test.invalid"), true, "another name: the machine's");
    });
  });
}
