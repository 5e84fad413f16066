import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { createAccount } from "@/lib/accounts/service";
import { createDomain, listDomains } from "@/lib/domains/service";
import { createPlan } from "@/lib/plans/service";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedActor, seedTenants } from "../support/seed";

// Email's records through the client API (DESIGN.md "Email", docs/email.md), on both backends:
// the answers' shapes, every refusal a 422 naming its field with nothing changed, plan limits,
// loops and shadows across accounts, the zone's mail records, and no password hash on the wire.
// Records only here (no MAIL_SERVER): tests/api/email-delivery.test.ts runs the real servers.

async function seed(db: Database) {
  const tenants = await seedTenants(db); // alice (reseller res1's), bob, a key of each scope
  await createPlan(db, { name: "mail-small", mailboxes: 2, mail_quota_mb: 300, mail_per_hour: 20, mail_per_day: 100 }, seedActor);
  const carol = await createAccount(db, { username: "carol", domain: "carol.example", plan: "mail-small" }, seedActor);
  const [aliceMain] = await listDomains(db, tenants.alice.id);
  const shop = await createDomain(db, tenants.alice.id, { domain: "shop", domain_type: "subdomain", parent_domain_id: aliceMain.id });
  // dan's mail is in a second domain of his, not his main one (mail_settings names its host).
  const dan = await createAccount(db, { username: "dan", domain: "dan.example" }, seedActor);
  await createDomain(db, dan.id, { domain: "dan-mail.example", domain_type: "domain" });
  return { ...tenants, carol, carolKey: await makeKey(db, { scope: "account", account_id: carol.id }), shop, dan, danKey: await makeKey(db, { scope: "account", account_id: dan.id }) };
}

const HASH = /\$6\$|SHA512-CRYPT|password_hash/i;

for (const backend of testBackends()) {
  describe(`client email (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    before(async () => {
      env = await createEnvironment(backend, seed);
    });
    after(async () => {
      await env?.teardown();
    });
    const alice = () => apiClient(env.server.baseUrl, env.seed.aliceKey);
    const bob = () => apiClient(env.server.baseUrl, env.seed.bobKey);
    const carol = () => apiClient(env.server.baseUrl, env.seed.carolKey);

    /** A 422 naming `field`, and nothing else of the kind made. */
    async function refused(client: ReturnType<typeof alice>, path: string, body: unknown, field: string) {
      const before = (await client.get(path)).body;
      const answer = await client.post(path, body);
      assert.equal(answer.status, 422, `${JSON.stringify(body)} → ${answer.status} ${JSON.stringify(answer.body)}`);
      // An item of a list is named by its path ("targets.0").
      const named = Object.keys(answer.body.errors ?? {}).some((key) => key === field || key.startsWith(`${field}.`));
      assert.ok(named, `names ${field}: ${JSON.stringify(answer.body)}`);
      assert.deepEqual((await client.get(path)).body, before, "nothing changed");
    }

    test("lists are [] before anything exists", async () => {
      for (const path of ["/api/client/email/domains", "/api/client/email/mailboxes", "/api/client/email/aliases"]) {
        const answer = await alice().get(path);
        assert.equal(answer.status, 200, path);
        assert.deepEqual(answer.body, [], path);
      }
    });

    test("POST /api/client/email/domains: 201 with dns expected and found; the zone gets MX, mail A, SPF and DMARC; a second time 422", async () => {
      const created = await alice().post("/api/client/email/domains", { domain: "Alice.Example" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.domain, "alice.example");
      const { dns } = created.body;
      assert.deepEqual(dns.mx, { name: "alice.example", type: "MX", expected: "10 mail.alice.example", found: ["10 mail.alice.example"], status: "ok" });
      assert.equal(dns.spf.expected, "v=spf1 mx a -all");
      assert.equal(dns.spf.status, "ok");
      assert.equal(dns.dmarc.name, "_dmarc.alice.example");
      assert.equal(dns.dmarc.status, "ok");
      // The panel's machine here serves no mail (MAIL_SERVER off): no key is made, none is expected.
      assert.equal(dns.dkim.status, "no_key");
      assert.deepEqual(created.body.dkim, { selector: null, keys: [] });
      const rotate = await alice().post(`/api/client/email/domains/${created.body.id}/dkim/rotate`, {});
      assert.equal(rotate.status, 422, JSON.stringify(rotate.body));
      assert.ok(rotate.body.errors.id, JSON.stringify(rotate.body));
      assert.equal((await alice().post("/api/client/email/domains/2147483647/dkim/rotate", {})).status, 404);
      const domainId = created.body.domain_id;
      const records = (await alice().get(`/api/client/dns-records?domain_id=${domainId}`)).body as { name: string; type: string; content: string }[];
      const has = (name: string, type: string) => records.some((record) => record.name === name && record.type === type);
      assert.ok(has("@", "MX") && has("mail", "A") && has("_dmarc", "TXT"), JSON.stringify(records));
      assert.equal((await alice().get("/api/client/email/domains")).body.length, 1);
      await refused(alice(), "/api/client/email/domains", { domain: "alice.example" }, "domain");
      await refused(alice(), "/api/client/email/domains", { domain: "bob.example" }, "domain");
      await refused(alice(), "/api/client/email/domains", { domain: "nowhere.example" }, "domain");
    });

    test("POST /api/client/email/mailboxes: 201 {id, address, quota_mb, used_mb, enabled, created_at}, never a hash nor the password", async () => {
      const created = await alice().post("/api/client/email/mailboxes", { address: "Info@Alice.Example", password: "a long password", quota_mb: 100 });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.deepEqual(Object.keys(created.body).sort(), ["address", "created_at", "enabled", "id", "quota_mb", "used_mb"]);
      assert.equal(created.body.address, "info@alice.example");
      assert.equal(created.body.enabled, true);
      assert.equal(created.body.used_mb, 0);
      for (const answer of [created, await alice().get("/api/client/email/mailboxes"), await alice().get(`/api/client/email/mailboxes/${created.body.id}`)]) {
        assert.doesNotMatch(JSON.stringify(answer.body), HASH);
        assert.doesNotMatch(JSON.stringify(answer.body), /a long password/);
      }
    });

    test("a mailbox in another of the account's domains makes it a mail domain", async () => {
      const created = await alice().post("/api/client/email/mailboxes", { address: "orders@shop.alice.example", password: "another long one", quota_mb: 50, enabled: false });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.enabled, false);
      const domains = (await alice().get("/api/client/email/domains")).body as { domain: string }[];
      assert.deepEqual(domains.map((domain) => domain.domain).sort(), ["alice.example", "shop.alice.example"]);
    });

    test("mailbox refusals: 422 naming the field, nothing made", async () => {
      const path = "/api/client/email/mailboxes";
      const ok = { password: "long enough!", quota_mb: 10 };
      await refused(alice(), path, { ...ok, address: "x@bob.example" }, "address");
      await refused(alice(), path, { ...ok, address: "x@nowhere.example" }, "address");
      for (const local of ["a+b", "a b", "a/b", "a:b", "a%b", "a..b", ".ab", "ab.", "a\"b", "a\nb", "ä", "-ab", "a=b", "a,b", "a#b", "a!b"]) {
        await refused(alice(), path, { ...ok, address: `${local}@alice.example` }, "address");
      }
      await refused(alice(), path, { ...ok, address: "no-at-sign" }, "address");
      await refused(alice(), path, { ...ok, address: "info@alice.example" }, "address"); // taken
      await refused(alice(), path, { ...ok, address: "short@alice.example", password: "nine char" }, "password");
      await refused(alice(), path, { ...ok, address: "q@alice.example", quota_mb: 0 }, "quota_mb");
      await refused(alice(), path, { ...ok, address: "q@alice.example", quota_mb: 1.5 }, "quota_mb");
      await refused(alice(), path, { ...ok, address: "q@alice.example", hash: "x" }, "body"); // an unknown field
    });

    test("plan limits: mailboxes and mail_quota_mb (the plan shows all four mail fields)", async () => {
      const account = await carol().get("/api/client/account");
      const { plan } = account.body;
      assert.deepEqual([plan.mailboxes, plan.mail_quota_mb, plan.mail_per_hour, plan.mail_per_day], [2, 300, 20, 100]);
      const path = "/api/client/email/mailboxes";
      await refused(carol(), path, { address: "big@carol.example", password: "long enough!", quota_mb: 301 }, "quota_mb");
      assert.equal((await carol().post(path, { address: "one@carol.example", password: "long enough!", quota_mb: 200 })).status, 201);
      await refused(carol(), path, { address: "two@carol.example", password: "long enough!", quota_mb: 101 }, "quota_mb");
      const two = await carol().post(path, { address: "two@carol.example", password: "long enough!", quota_mb: 100 });
      assert.equal(two.status, 201);
      await refused(carol(), path, { address: "three@carol.example", password: "long enough!", quota_mb: 1 }, "quota");
      const raised = await carol().put(`${path}/${two.body.id}`, { quota_mb: 101 });
      assert.equal(raised.status, 422);
      assert.ok(raised.body.errors.quota_mb);
      assert.equal((await carol().get(`${path}/${two.body.id}`)).body.quota_mb, 100);
    });

    test("PUT: password, quota and enabled change; address → 422; another account's id → 404", async () => {
      const [info] = (await alice().get("/api/client/email/mailboxes")).body as { id: number; address: string }[];
      const changed = await alice().put(`/api/client/email/mailboxes/${info.id}`, { password: "a new long password", quota_mb: 120, enabled: false });
      assert.equal(changed.status, 200, JSON.stringify(changed.body));
      assert.equal(changed.body.quota_mb, 120);
      assert.equal(changed.body.enabled, false);
      assert.doesNotMatch(JSON.stringify(changed.body), HASH);
      const renamed = await alice().put(`/api/client/email/mailboxes/${info.id}`, { address: "other@alice.example" });
      assert.equal(renamed.status, 422);
      assert.ok(renamed.body.errors.address);
      const short = await alice().put(`/api/client/email/mailboxes/${info.id}`, { password: "short" });
      assert.equal(short.status, 422);
      assert.ok(short.body.errors.password);
      assert.equal((await bob().put(`/api/client/email/mailboxes/${info.id}`, { enabled: true })).status, 404);
      assert.equal((await bob().get(`/api/client/email/mailboxes/${info.id}`)).status, 404);
      assert.equal((await bob().delete(`/api/client/email/mailboxes/${info.id}`)).status, 404);
      assert.equal((await alice().put(`/api/client/email/mailboxes/${info.id}`, { enabled: true })).body.enabled, true);
    });

    test("aliases: 201 {id, address, targets}; catch-all @domain; refusals name address or targets", async () => {
      const path = "/api/client/email/aliases";
      const sales = await alice().post(path, { address: "sales@alice.example", targets: ["info@alice.example", "Someone@Elsewhere.Example"] });
      assert.equal(sales.status, 201, JSON.stringify(sales.body));
      assert.deepEqual(Object.keys(sales.body).sort(), ["address", "id", "targets"]);
      assert.deepEqual(sales.body.targets, ["info@alice.example", "someone@elsewhere.example"]);
      // Shadowing a mailbox, a second alias of one address, another's domain, a bad target.
      await refused(alice(), path, { address: "info@alice.example", targets: ["x@elsewhere.example"] }, "address");
      await refused(alice(), path, { address: "sales@alice.example", targets: ["x@elsewhere.example"] }, "address");
      await refused(alice(), path, { address: "x@bob.example", targets: ["info@alice.example"] }, "address");
      await refused(alice(), path, { address: "@bob.example", targets: ["info@alice.example"] }, "address");
      await refused(alice(), path, { address: "y@alice.example", targets: [] }, "targets");
      await refused(alice(), path, { address: "y@alice.example", targets: ["not an address"] }, "targets");
      await refused(alice(), path, { address: "y@alice.example", targets: ["a,b@elsewhere.example"] }, "targets");
      await refused(alice(), path, { address: "y@alice.example", targets: ["nobody@alice.example"] }, "targets");
      // Loops: to itself, through another alias, through the catch-all.
      await refused(alice(), path, { address: "self@alice.example", targets: ["self@alice.example"] }, "targets");
      assert.equal((await alice().post(path, { address: "a@alice.example", targets: ["info@alice.example"] })).status, 201);
      assert.equal((await alice().post(path, { address: "b@alice.example", targets: ["a@alice.example"] })).status, 201);
      await refused(alice(), path, { address: "c@alice.example", targets: ["c@alice.example", "b@alice.example"] }, "targets");
      await refused(alice(), path, { address: "@alice.example", targets: ["unknown@alice.example"] }, "targets");
      const catchAll = await alice().post(path, { address: "@alice.example", targets: ["info@alice.example"] });
      assert.equal(catchAll.status, 201, JSON.stringify(catchAll.body));
      assert.equal(catchAll.body.address, "@alice.example");
      await refused(alice(), path, { address: "@alice.example", targets: ["info@alice.example"] }, "address");
      // A mailbox may not take an alias's address either.
      await refused(alice(), "/api/client/email/mailboxes", { address: "sales@alice.example", password: "long enough!", quota_mb: 5 }, "address");
    });

    test("a loop across two accounts is refused", async () => {
      assert.equal((await bob().post("/api/client/email/aliases", { address: "fwd@bob.example", targets: ["fwd2@alice.example"] })).status, 201);
      await refused(alice(), "/api/client/email/aliases", { address: "fwd2@alice.example", targets: ["fwd@bob.example"] }, "targets");
    });

    test("admin and reseller keys act with X-Hosting-Account; account keys see only their own", async () => {
      const admin = apiClient(env.server.baseUrl, env.seed.adminKey, "alice");
      const reseller = apiClient(env.server.baseUrl, env.seed.resellerKey, "alice");
      const own = (await alice().get("/api/client/email/mailboxes")).body;
      assert.deepEqual((await admin.get("/api/client/email/mailboxes")).body, own);
      assert.deepEqual((await reseller.get("/api/client/email/mailboxes")).body, own);
      assert.equal((await apiClient(env.server.baseUrl, env.seed.resellerKey, "bob").get("/api/client/email/mailboxes")).status, 404);
      assert.equal((await apiClient(env.server.baseUrl, env.seed.adminKey).get("/api/client/email/mailboxes")).status, 400);
      const bobs = (await bob().get("/api/client/email/mailboxes")).body as unknown[];
      assert.deepEqual(bobs, []);
    });

    test("DELETE an alias and a mailbox: 200 {message}; then 404", async () => {
      const aliases = (await alice().get("/api/client/email/aliases")).body as { id: number; address: string }[];
      const sales = aliases.find((alias) => alias.address === "sales@alice.example")!;
      const removed = await alice().delete(`/api/client/email/aliases/${sales.id}`);
      assert.equal(removed.status, 200);
      assert.equal(typeof removed.body.message, "string");
      assert.equal((await alice().delete(`/api/client/email/aliases/${sales.id}`)).status, 404);
      const boxes = (await alice().get("/api/client/email/mailboxes")).body as { id: number; address: string }[];
      const orders = boxes.find((box) => box.address === "orders@shop.alice.example")!;
      assert.equal((await alice().delete(`/api/client/email/mailboxes/${orders.id}`)).status, 200);
      assert.equal((await alice().get(`/api/client/email/mailboxes/${orders.id}`)).status, 404);
    });

    test("mail_settings on GET /api/client/account and GET /api/admin/accounts/{id}: IMAP 993 and POP3 995 with TLS, SMTP 587 and 465, at the host the MX names", async () => {
      // alice's main domain is a mail domain (made above); dan has mail only in a second domain;
      // bob has none yet: the main domain's mail host, the one its MX will name.
      const settings = (host: string) => ({ imap: { host, port: 993, tls: true }, pop3: { host, port: 995, tls: true }, smtp: { host, ports: [587, 465] } });
      const adminKey = apiClient(env.server.baseUrl, env.seed.adminKey);
      const cases = [
        { client: alice(), id: env.seed.alice.id, host: "mail.alice.example" },
        { client: bob(), id: env.seed.bob.id, host: "mail.bob.example" },
        { client: apiClient(env.server.baseUrl, env.seed.danKey), id: env.seed.dan.id, host: "mail.dan-mail.example" },
      ];
      // dan's mail domain is made here, through the API, so the host is seen to follow it.
      assert.deepEqual((await cases[2].client.get("/api/client/account")).body.mail_settings, settings("mail.dan.example"));
      assert.equal((await cases[2].client.post("/api/client/email/domains", { domain: "dan-mail.example" })).status, 201);
      for (const { client, id, host } of cases) {
        const own = await client.get("/api/client/account");
        assert.equal(own.status, 200);
        assert.deepEqual(own.body.mail_settings, settings(host), JSON.stringify(own.body));
        const byAdmin = await adminKey.get(`/api/admin/accounts/${id}`);
        assert.equal(byAdmin.status, 200);
        assert.deepEqual(byAdmin.body.mail_settings, settings(host));
      }
      const listed = (await adminKey.get("/api/admin/accounts")).body as { username: string; mail_settings: unknown }[];
      assert.deepEqual(listed.find((account) => account.username === "dan")!.mail_settings, settings("mail.dan-mail.example"));
    });

    test("GET /api/admin/plans shows the mail fields", async () => {
      const plans = (await apiClient(env.server.baseUrl, env.seed.adminKey).get("/api/admin/plans")).body as Record<string, unknown>[];
      const small = plans.find((plan) => plan.name === "mail-small")!;
      assert.deepEqual([small.mailboxes, small.mail_quota_mb, small.mail_per_hour, small.mail_per_day], [2, 300, 20, 100]);
    });
  });
}
