import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { type ApiResponse, apiClient } from "../support/http";
import { seedTenants } from "../support/seed";

// The rules of DESIGN.md "Records" under concurrent requests: conflicting writes are sent
// together, many times, and exactly one of each pair may win. The zone files that result must
// still load (named-checkzone, Debian's bind9-utils).


/** Exactly one of the answers succeeded and the others were refused with 422. */
function assertOneWinner(answers: ApiResponse[], round: number) {
  const statuses = answers.map((answer) => answer.status);
  assert.equal(statuses.filter((status) => status < 300).length, 1, `round ${round}: one success in ${statuses}`);
  assert.equal(statuses.filter((status) => status === 422).length, answers.length - 1, `round ${round}: the rest 422 in ${statuses}`);
}

for (const backend of testBackends()) {
  // PGlite runs one transaction at a time (no interleaving to catch) and slowly: fewer rounds.
  const ROUNDS = backend === "postgres" ? 30 : 10;
  describe(`rules under concurrent requests (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seedTenants>>>;
    before(async () => {
      env = await createEnvironment(backend, seedTenants);
    });
    after(async () => {
      await env?.teardown();
    });
    const alice = () => apiClient(env.server.baseUrl, env.seed.aliceKey);
    const bob = () => apiClient(env.server.baseUrl, env.seed.bobKey);

    function checkZone(domain: string) {
      const file = path.join(env.database.env.DATA_DIR, "zones", `${domain}.zone`);
      execFileSync("named-checkzone", [domain, file], { stdio: "pipe" });
    }

    test("a CNAME and another record at one name: one wins, whether created or updated into place", async () => {
      const domainId = (await alice().get("/api/client/domains")).body[0].id;
      const post = (body: object) => alice().post("/api/client/dns-records", { domain_id: domainId, ttl: 300, ...body });
      for (let round = 0; round < ROUNDS; round++) {
        const name = `n${round}`;
        const [moving, other] = await Promise.all([
          post({ name: `cname-${round}`, type: "CNAME", content: "target.example." }),
          post({ name: `a-${round}`, type: "A", content: "192.0.2.1" }),
        ]);
        assert.equal(moving.status, 201);
        assert.equal(other.status, 201);
        const answers = await Promise.all(
          round % 2 === 0
            ? // a PUT turning a record into a CNAME at `name`, and a POST of an A record there
              [alice().put(`/api/client/dns-records/${moving.body.id}`, { name }), post({ name, type: "A", content: "192.0.2.2" })]
            : // two PUTs moving a CNAME and an A record to the same name
              [alice().put(`/api/client/dns-records/${moving.body.id}`, { name }), alice().put(`/api/client/dns-records/${other.body.id}`, { name })],
        );
        assertOneWinner(answers, round);
      }
      checkZone("alice.example");
    });

    test("identical records sent together: one is stored", async () => {
      const domainId = (await alice().get("/api/client/domains")).body[0].id;
      for (let round = 0; round < ROUNDS; round++) {
        const record = { domain_id: domainId, name: `mx${round}`, type: "MX", content: "mail.example.", priority: 10, ttl: 300 };
        assertOneWinner(await Promise.all([alice().post("/api/client/dns-records", record), alice().post("/api/client/dns-records", record)]), round);
      }
      const records = (await alice().get(`/api/client/dns-records?domain_id=${domainId}`)).body as { name: string; type: string }[];
      assert.equal(records.filter((record) => record.type === "MX" && record.name.startsWith("mx")).length, ROUNDS);
      checkZone("alice.example");
    });

    test("an identical record is refused, one differing in priority is not", async () => {
      const domainId = (await alice().get("/api/client/domains")).body[0].id;
      const record = { domain_id: domainId, name: "dup", type: "MX", content: "mx.example.", priority: 10, ttl: 300 };
      assert.equal((await alice().post("/api/client/dns-records", record)).status, 201);
      const again = await alice().post("/api/client/dns-records", { ...record, ttl: 600 });
      assert.equal(again.status, 422);
      assert.ok(again.body.errors.content, "the error names the content");
      assert.equal((await alice().post("/api/client/dns-records", { ...record, priority: 20 })).status, 201);
      const txt = await alice().post("/api/client/dns-records", { domain_id: domainId, name: "dup", type: "TXT", content: "v=1", ttl: 300 });
      assert.equal(txt.status, 201);
      const copy = await alice().post("/api/client/dns-records", { domain_id: domainId, name: "dup", type: "TXT", content: "v=2", ttl: 300 });
      assert.equal((await alice().put(`/api/client/dns-records/${copy.body.id}`, { content: "v=1" })).status, 422, "an update into a copy too");
      const aaaa = await alice().post("/api/client/dns-records", { domain_id: domainId, name: "dup", type: "AAAA", content: "2001:DB8:0:0::1", ttl: 300 });
      assert.equal(aaaa.status, 201);
      assert.equal(aaaa.body.content, "2001:db8::1", "stored in its one canonical spelling");
      const respelled = await alice().post("/api/client/dns-records", { domain_id: domainId, name: "dup", type: "AAAA", content: "2001:0db8::0001", ttl: 300 });
      assert.equal(respelled.status, 422, "another spelling of the same address is the same record");
      const zoned = await alice().post("/api/client/dns-records", { domain_id: domainId, name: "dup", type: "AAAA", content: "fe80::1%eth0", ttl: 300 });
      assert.equal(zoned.status, 422, "an address with a zone index is refused, not a 500");
      assert.ok(zoned.body.errors.content);
    });

    test("a domain inside or containing another account's is refused in both directions", async () => {
      assert.equal((await alice().post("/api/client/domains", { domain: "mail.held.example", domain_type: "domain" })).status, 201);
      const containing = await bob().post("/api/client/domains", { domain: "held.example", domain_type: "domain" });
      assert.equal(containing.status, 422);
      assert.ok(containing.body.errors.domain);
      assert.equal((await alice().post("/api/client/domains", { domain: "outer.example", domain_type: "domain" })).status, 201);
      const inside = await bob().post("/api/client/domains", { domain: "deep.inner.outer.example", domain_type: "domain" });
      assert.equal(inside.status, 422);
      assert.ok(inside.body.errors.domain);
      // The same account may nest its own names.
      assert.equal((await alice().post("/api/client/domains", { domain: "held.example", domain_type: "domain" })).status, 201);
    });

    test("a parent and a child domain created together by two accounts: one wins, either order", async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const parent = `race${round}.example`;
        const [first, second] = round % 2 === 0 ? [alice(), bob()] : [bob(), alice()];
        const answers = await Promise.all([
          first.post("/api/client/domains", { domain: `mail.${parent}`, domain_type: "domain" }),
          second.post("/api/client/domains", { domain: parent, domain_type: "domain" }),
        ]);
        assertOneWinner(answers, round);
        const winner = answers.find((answer) => answer.status === 201)!;
        checkZone(winner.body.domain);
      }
    });
  });
}
