import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { createAccount } from "@/lib/accounts/service";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedActor } from "../support/seed";

// A customer (or a reseller) claims a name the server keeps for itself: the panel's own host name
// (a certificate for it, nginx serving it, admins phished on a look-alike), its name servers, its
// SSH host, names inside or around them (a zone on this server holding the panel's records), or a
// local name. Every way in — account create, domain create of each type — answers 422 at `domain`.

const SERVER = { PUBLIC_URL: "https://panel.hosting.test", DNS_NAMESERVERS: "ns1.dns-host.test,ns2.dns-host.test", SSH_HOST: "ssh.hosting.test" };

const KEPT = [
  "panel.hosting.test",
  "PANEL.hosting.test.",
  "www.panel.hosting.test",
  "hosting.test",
  "ns1.dns-host.test",
  "ns2.dns-host.test",
  "mail.ns2.dns-host.test",
  "dns-host.test",
  "ssh.hosting.test",
  "app.localhost",
  "localhost.localdomain",
  "printer.local",
];

async function seed(db: Database) {
  const account = await createAccount(db, { username: "tenant", domain: "tenant.example" }, seedActor);
  return {
    adminKey: await makeKey(db, { scope: "admin" }),
    accountKey: await makeKey(db, { scope: "account", account_id: account.id }),
  };
}

for (const backend of machineBackends("pglite")) {
  describe(`names the server keeps (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    before(async () => {
      env = await createEnvironment(backend, seed, SERVER);
    });
    after(async () => {
      await env?.teardown();
    });
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const customer = () => apiClient(env.server.baseUrl, env.seed.accountKey);

    test("an account whose main domain is one of them, or a local name: 422 at domain", async () => {
      for (const [index, domain] of KEPT.entries()) {
        const refused = await admin().post("/api/admin/accounts", { username: `claim${index}`, domain });
        assert.equal(refused.status, 422, `${domain}: ${JSON.stringify(refused.body)}`);
        assert.ok(refused.body.errors.domain, `${domain}: ${JSON.stringify(refused.body)}`);
      }
      assert.equal((await admin().get("/api/admin/accounts?search=claim")).body.length, 0, "no account was made");
    });

    test("a customer's domain, parked domain or subdomain that is one of them: 422 at domain", async () => {
      const main = (await customer().get("/api/client/domains")).body[0];
      for (const domain of KEPT) {
        for (const body of [
          { domain, domain_type: "domain" },
          { domain, domain_type: "parked", parked_on_domain_id: main.id },
        ]) {
          const refused = await customer().post("/api/client/domains", body);
          assert.equal(refused.status, 422, `${JSON.stringify(body)}: ${JSON.stringify(refused.body)}`);
          assert.ok(refused.body.errors.domain, JSON.stringify(refused.body));
        }
      }
      // A subdomain of the customer's own domain named like the panel is the customer's own name.
      const own = await customer().post("/api/client/domains", { domain: "panel", domain_type: "subdomain", parent_domain_id: main.id });
      assert.equal(own.status, 201, JSON.stringify(own.body));
      assert.deepEqual((await customer().get("/api/client/domains")).body.map((row: { domain: string }) => row.domain), ["tenant.example", "panel.tenant.example"]);
    });

    test("ordinary names are still taken", async () => {
      const created = await admin().post("/api/admin/accounts", { username: "plain", domain: "hosting-test.example" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
    });
  });
}
