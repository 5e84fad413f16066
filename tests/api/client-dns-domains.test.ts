import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { addPhpVersion } from "@/lib/php/service";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { seedActor, seedTenants } from "../support/seed";

// DNS records, domains and the account profile, over HTTP; every zone file the panel writes is
// checked with named-checkzone (Debian's bind9-utils) when it is installed.

const hasCheckzone = fs.existsSync("/usr/bin/named-checkzone") || fs.existsSync("/usr/sbin/named-checkzone");

async function seed(db: Database) {
  const tenants = await seedTenants(db);
  const php = await addPhpVersion(db, { version: "8.3" }, seedActor);
  return { ...tenants, php };
}

for (const backend of testBackends()) {
  describe(`client DNS, domains and account (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    before(async () => {
      env = await createEnvironment(backend, seed);
    });
    after(async () => {
      await env?.teardown();
    });
    const alice = () => apiClient(env.server.baseUrl, env.seed.aliceKey);
    const zonesDir = () => path.join(env.database.env.DATA_DIR, "zones");
    const aliceDomainId = async () => (await alice().get("/api/client/domains")).body[0].id as number;

    function checkZone(domain: string) {
      const file = path.join(zonesDir(), `${domain}.zone`);
      assert.ok(fs.existsSync(file), `${file} written`);
      if (hasCheckzone) execFileSync("named-checkzone", [domain, file], { stdio: "pipe" });
      return fs.readFileSync(file, "utf8");
    }

    const serialOf = async (domainId: number) => {
      const records = (await alice().get(`/api/client/dns-records?domain_id=${domainId}`)).body;
      const soa = records.find((record: { type: string }) => record.type === "SOA");
      return Number(soa.content.split(" ")[2]);
    };

    test("a new account's zone has SOA, two NS and the apex A, and a valid zone file", async () => {
      const id = await aliceDomainId();
      const records = (await alice().get(`/api/client/dns-records?domain_id=${id}`)).body;
      assert.deepEqual(records.map((r: { type: string }) => r.type).sort(), ["A", "NS", "NS", "SOA"]);
      assert.match(String(await serialOf(id)), /^\d{10}$/);
      checkZone("alice.example");
    });

    test("records of every type are created, names stored relative, every change bumps the serial", async () => {
      const id = await aliceDomainId();
      let serial = await serialOf(id);
      const create = (body: object) => alice().post("/api/client/dns-records", { domain_id: id, ttl: 3600, ...body });
      for (const body of [
        { name: "www", type: "A", content: "192.0.2.10" },
        { name: "www.alice.example.", type: "AAAA", content: "2001:db8::10" },
        { name: "blog.alice.example", type: "CNAME", content: "www.alice.example" },
        { name: "@", type: "MX", content: "mail.alice.example", priority: 10 },
        { name: "@", type: "TXT", content: `v=spf1 -all "quoted" ${"x".repeat(300)}` },
        { name: "_sip._tcp", type: "SRV", content: "sip.alice.example", priority: 10, weight: 5, port: 5060 },
        { name: "sub", type: "NS", content: "ns.other.example" },
      ]) {
        const response = await create(body);
        assert.equal(response.status, 201, JSON.stringify([body, response.body]));
        const next = await serialOf(id);
        assert.ok(next > serial, "serial bumped");
        serial = next;
      }
      const names = (await alice().get(`/api/client/dns-records?domain_id=${id}`)).body.map((r: { name: string }) => r.name);
      assert.ok(names.includes("www") && names.includes("blog") && names.includes("_sip._tcp"));
      const zone = checkZone("alice.example");
      assert.match(zone, new RegExp(`${serial}`));
    });

    test("422 for invalid content, names outside the zone, missing MX/SRV fields, TTL out of range, CNAME conflicts", async () => {
      const id = await aliceDomainId();
      for (const body of [
        { name: "a", type: "A", content: "2001:db8::1", ttl: 3600 },
        { name: "a", type: "AAAA", content: "192.0.2.1", ttl: 3600 },
        { name: "www.other.example.", type: "A", content: "192.0.2.1", ttl: 3600 },
        { name: "x", type: "MX", content: "mail.alice.example", ttl: 3600 },
        { name: "_x._tcp", type: "SRV", content: "h.alice.example", priority: 1, ttl: 3600 },
        { name: "a", type: "A", content: "192.0.2.1", ttl: 59 },
        { name: "a", type: "A", content: "192.0.2.1", ttl: 86401 },
        { name: "www", type: "CNAME", content: "x.alice.example", ttl: 3600 },
        { name: "blog", type: "A", content: "192.0.2.1", ttl: 3600 },
        { name: "a", type: "CNAME", content: "not a host", ttl: 3600 },
      ]) {
        const response = await alice().post("/api/client/dns-records", { domain_id: id, ...body });
        assert.equal(response.status, 422, JSON.stringify(body));
        assert.equal(typeof response.body.error, "string");
      }
      assert.equal((await alice().get("/api/client/dns-records")).status, 422, "domain_id is required");
      assert.equal((await alice().get("/api/client/dns-records?domain_id=abc")).status, 422);
    });

    test("update and delete; SOA is 403; a record's domain never changes; other accounts get 404", async () => {
      const id = await aliceDomainId();
      const records = (await alice().get(`/api/client/dns-records?domain_id=${id}`)).body;
      const www = records.find((r: { name: string; type: string }) => r.name === "www" && r.type === "A");
      const soa = records.find((r: { type: string }) => r.type === "SOA");
      const updated = await alice().put(`/api/client/dns-records/${www.id}`, { content: "192.0.2.99", ttl: 600 });
      assert.equal(updated.status, 200);
      assert.deepEqual([updated.body.content, updated.body.ttl, updated.body.name], ["192.0.2.99", 600, "www"]);
      assert.equal(updated.body.warning, undefined, "a zone file written without trouble adds no warning");
      assert.equal((await alice().put(`/api/client/dns-records/${www.id}`, { domain_id: 1 })).status, 422);
      assert.equal((await alice().put(`/api/client/dns-records/${soa.id}`, { ttl: 600 })).status, 403);
      assert.equal((await alice().delete(`/api/client/dns-records/${soa.id}`)).status, 403);
      const soaCreate = await alice().post("/api/client/dns-records", { domain_id: id, name: "@", type: "SOA", content: "x", ttl: 3600 });
      assert.equal(soaCreate.status, 403);
      assert.match(soaCreate.body.error, /SOA records cannot be created/);
      assert.equal((await alice().put(`/api/client/dns-records/${www.id}`, { type: "SOA" })).status, 403);
      assert.equal((await alice().get(`/api/client/dns-records?domain_id=${id}`)).body.length, records.length, "nothing created");
      const bob = apiClient(env.server.baseUrl, env.seed.bobKey);
      assert.equal((await bob.get(`/api/client/dns-records/${www.id}`)).status, 404);
      assert.equal((await bob.put(`/api/client/dns-records/${www.id}`, { ttl: 900 })).status, 404);
      assert.equal((await bob.delete(`/api/client/dns-records/${www.id}`)).status, 404);
      assert.equal((await bob.get(`/api/client/dns-records?domain_id=${id}`)).status, 404);
      assert.equal((await alice().get(`/api/client/dns-records/${www.id}`)).body.ttl, 600, "untouched by bob");
      assert.equal((await alice().delete(`/api/client/dns-records/${www.id}`)).status, 200);
      assert.equal((await alice().get(`/api/client/dns-records/${www.id}`)).status, 404);
      checkZone("alice.example");
    });

    test("domains: domain, subdomain, parked (IDN to punycode), unique on the server, zones provisioned", async () => {
      const main = await aliceDomainId();
      const added = await alice().post("/api/client/domains", { domain: "Bücher.example", domain_type: "domain" });
      assert.equal(added.status, 201);
      assert.equal(added.body.domain, "xn--bcher-kva.example");
      const sub = await alice().post("/api/client/domains", { domain: "shop", domain_type: "subdomain", parent_domain_id: main });
      assert.equal(sub.status, 201);
      assert.deepEqual([sub.body.domain, sub.body.subdomain, sub.body.parent_domain_id], ["shop.alice.example", "shop", main]);
      const parked = await alice().post("/api/client/domains", { domain: "alias.example", domain_type: "parked", parked_on_domain_id: main });
      assert.equal(parked.status, 201);
      assert.equal(parked.body.parked_on_domain_id, main);
      for (const domain of ["xn--bcher-kva.example", "shop.alice.example", "alias.example"]) checkZone(domain);
      const zone = (await alice().get(`/api/client/dns-records?domain_id=${added.body.id}`)).body;
      assert.equal(zone.length, 4);

      assert.equal((await alice().post("/api/client/domains", { domain: "bob.example", domain_type: "domain" })).status, 422, "taken by bob");
      assert.equal((await alice().post("/api/client/domains", { domain: "not_a domain", domain_type: "domain" })).status, 422);
      const bobDomain = (await apiClient(env.server.baseUrl, env.seed.bobKey).get("/api/client/domains")).body[0].id;
      assert.equal((await alice().post("/api/client/domains", { domain: "x", domain_type: "subdomain", parent_domain_id: bobDomain })).status, 422);
      assert.equal((await alice().post("/api/client/domains", { domain: "y.example", domain_type: "parked", parked_on_domain_id: bobDomain })).status, 422);
      assert.equal((await alice().post("/api/client/domains", { domain: "z", domain_type: "subdomain" })).status, 422);
      assert.equal((await apiClient(env.server.baseUrl, env.seed.bobKey).get(`/api/client/domains/${main}`)).status, 404);
    });

    test("account: profile update, restricted fields refused with nothing changed, configure-php", async () => {
      const updated = await alice().put("/api/client/account", { name: "Alice A.", city: "Lyon", is_auto_ssl_enabled: true });
      assert.equal(updated.status, 200);
      assert.deepEqual([updated.body.name, updated.body.city, updated.body.is_auto_ssl_enabled], ["Alice A.", "Lyon", true]);
      for (const field of ["plan_id", "has_ssh_access", "username", "status", "is_suspended", "reseller_id", "domain"]) {
        const refused = await alice().put("/api/client/account", { name: "Changed", [field]: 1 });
        assert.equal(refused.status, 422, field);
        assert.ok(refused.body.errors[field], field);
      }
      assert.equal((await alice().get("/api/client/account")).body.name, "Alice A.", "nothing changed");

      const main = await aliceDomainId();
      const php = env.seed.php.id;
      const configured = await alice().post("/api/client/account/configure-php", { domain_id: main, php_version_id: php, is_php_fpm_enabled: true });
      assert.equal(configured.status, 200);
      const domain = (await alice().get(`/api/client/domains/${main}`)).body;
      assert.deepEqual([domain.php_version, domain.is_php_fpm_enabled], [{ id: php, version: "8.3" }, true]);
      assert.equal((await alice().post("/api/client/account/configure-php", { domain_id: main, php_version_id: 999 })).status, 422);
      const bobDomain = (await apiClient(env.server.baseUrl, env.seed.bobKey).get("/api/client/domains")).body[0].id;
      assert.equal((await alice().post("/api/client/account/configure-php", { domain_id: bobDomain, php_version_id: php })).status, 404);
    });

    test("usage details count what the account has against its plan", async () => {
      const usage = await alice().get("/api/client/account/usage-details");
      assert.equal(usage.status, 200);
      assert.equal(usage.body.domains.used, 4);
      assert.equal(usage.body.domains.limit, null);
      assert.equal(usage.body.disk.used_mb, null);
      assert.equal(usage.body.disk.measured_at, null, "nothing measured, no time");
      assert.deepEqual(usage.body.provisioning, { databases: false, web: false }, "records only: no sites, no homes");
    });
  });
}

describe("a failing ZONE_RELOAD_COMMAND is reported in the response; the change stands", () => {
  let env: TestEnvironment<Awaited<ReturnType<typeof seedTenants>>>;
  before(async () => {
    env = await createEnvironment(testBackends()[0], seedTenants, { ZONE_RELOAD_COMMAND: "false {zone}" });
  });
  after(async () => {
    await env?.teardown();
  });

  test("domain create, record create, update and delete answer their status with a warning", async () => {
    const alice = apiClient(env.server.baseUrl, env.seed.aliceKey);
    const domain = await alice.post("/api/client/domains", { domain: "reload.example", domain_type: "domain" });
    assert.equal(domain.status, 201);
    assert.match(domain.body.warning, /zone reload failed/);
    assert.doesNotMatch(domain.body.warning, /\{zone\}|exited/, "the command and its output stay in the log");
    const record = await alice.post("/api/client/dns-records", { domain_id: domain.body.id, name: "www", type: "A", content: "192.0.2.7", ttl: 600 });
    assert.equal(record.status, 201);
    assert.match(record.body.warning, /zone reload failed/);
    const updated = await alice.put(`/api/client/dns-records/${record.body.id}`, { ttl: 900 });
    assert.equal(updated.status, 200);
    assert.match(updated.body.warning, /zone reload failed/);
    const deleted = await alice.delete(`/api/client/dns-records/${record.body.id}`);
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.message, "DNS record deleted");
    assert.match(deleted.body.warning, /zone reload failed/);
    const zone = await alice.get(`/api/client/dns-records?domain_id=${domain.body.id}`);
    assert.equal(zone.body.length, 4, "the domain and its zone were kept");
    assert.equal((await alice.get(`/api/client/domains/${domain.body.id}`)).body.warning, undefined, "reads carry no warning");
  });
});
