import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import type { TLSSocket } from "node:tls";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { and, eq } from "drizzle-orm";
import { domainCertificates } from "@/db/schema";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { type AcmeSites, startAcmeSites } from "../support/acme-sites";
import type { Pebble } from "../support/pebble";
import { seedTenants } from "../support/seed";

// AutoSSL end to end: the real server writes its sites for a test nginx (own config and ports)
// and gets certificates from pebble, which validates HTTP-01 through that nginx. Turning AutoSSL
// on over the API makes the certificate active within a bounded wait, the site answers over
// HTTPS with a certificate for the right names (trusted through pebble's root) and HTTP
// redirects; a parked domain added later is on the re-issued certificate; a name the CA cannot
// validate records `failed` with the reason and leaves the working certificate in place; a mail
// domain's host name, mail.<domain>, gets a certificate of its own, its challenge answered by the
// domain's site.
// (Renewal thresholds and back-off timing: tests/unit/autossl-job.test.ts, with a clock.)

const WAIT_MS = 30_000;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  names: string[];
}

/** GET `url` on 127.0.0.1 as `host` (over TLS when `ca` is given: SNI and verification as `host`). */
function fetchAs(port: number, host: string, ca?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const options = { host: "127.0.0.1", port, path: "/", headers: { host }, servername: host, ca, timeout: 5000 };
    const onResponse = (response: http.IncomingMessage) => {
      const socket = response.socket as TLSSocket;
      const san = ca ? (socket.getPeerCertificate().subjectaltname ?? "") : "";
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (body += chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode!, headers: response.headers, body, names: san.split(", ").filter(Boolean).map((name) => name.replace(/^DNS:/, "")).sort() }),
      );
    };
    const request = ca ? https.get({ ...options, agent: false }, onResponse) : http.get(options, onResponse);
    request.on("timeout", () => request.destroy(new Error("timed out")));
    request.on("error", reject);
  });
}

async function waitUntil<T>(what: string, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  let last: unknown = null;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${WAIT_MS / 1000} s${last ? ` (${(last as Error).message})` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

for (const backend of machineBackends("postgres")) {
  describe(`AutoSSL against pebble (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seedTenants>>>;
    let acme: AcmeSites;
    let pebble: Pebble;
    let httpPort: number;
    let httpsPort: number;
    const alice = () => apiClient(env.server.baseUrl, env.seed.aliceKey);
    const domain = async (name: string) => (await alice().get("/api/client/domains")).body.find((row: { domain: string }) => row.domain === name);

    before(async () => {
      acme = await startAcmeSites();
      ({ httpPort, httpsPort, pebble } = acme);
      env = await createEnvironment(backend, seedTenants, acme.env);
      const documentRoot = path.join(acme.env.HOME_ROOT, "alice", "public_html");
      fs.mkdirSync(documentRoot, { recursive: true });
      fs.writeFileSync(path.join(documentRoot, "index.html"), "alice's site\n");
    });
    after(async () => {
      try {
        await env?.teardown();
      } finally {
        await acme?.stop();
      }
    });

    test("before AutoSSL: no certificate, the site answers over HTTP", async () => {
      assert.deepEqual((await domain("alice.example")).ssl, { status: "off", expires_at: null, error: null });
      const plain = await fetchAs(httpPort, "alice.example");
      assert.deepEqual([plain.status, plain.body], [200, "alice's site\n"]);
    });

    test("turning AutoSSL on makes the certificate active; HTTPS serves the site, HTTP redirects", async () => {
      const turned = await alice().put("/api/client/account", { is_auto_ssl_enabled: true });
      assert.equal(turned.status, 200);
      assert.equal((await domain("alice.example")).ssl.status, "pending");
      const ssl = await waitUntil("an active certificate", async () => {
        const state = (await domain("alice.example")).ssl;
        assert.notEqual(state.status, "failed", state.error);
        return state.status === "active" && state;
      });
      assert.equal(ssl.error, null);
      assert.ok(Date.parse(ssl.expires_at) > Date.now() + 86_400_000);

      const secure = await waitUntil("the site over HTTPS", () => fetchAs(httpsPort, "alice.example", pebble.issuanceRoot));
      assert.deepEqual([secure.status, secure.body], [200, "alice's site\n"]);
      assert.deepEqual(secure.names, ["alice.example", "www.alice.example"]);
      const www = await fetchAs(httpsPort, "www.alice.example", pebble.issuanceRoot);
      assert.equal(www.status, 200);

      // (nginx's old workers may answer a moment longer after a reload.)
      const plain = await waitUntil("the redirect", async () => {
        const answer = await fetchAs(httpPort, "alice.example");
        return answer.status === 301 && answer;
      });
      assert.equal(plain.headers.location, `https://alice.example:${httpsPort}/`);
      // bob has not turned AutoSSL on.
      assert.equal((await apiClient(env.server.baseUrl, env.seed.bobKey).get("/api/client/domains")).body[0].ssl.status, "off");
    });

    test("a parked domain added later is on the re-issued certificate", async () => {
      const main = await domain("alice.example");
      const parked = await alice().post("/api/client/domains", { domain: "alice-parked.example", domain_type: "parked", parked_on_domain_id: main.id });
      assert.equal(parked.status, 201, JSON.stringify(parked.body));
      const secure = await waitUntil("the parked name on the certificate", async () => {
        const answer = await fetchAs(httpsPort, "alice-parked.example", pebble.issuanceRoot);
        return answer.names.includes("alice-parked.example") && answer;
      });
      assert.deepEqual(secure.names, ["alice-parked.example", "alice.example", "www.alice.example"]);
      assert.deepEqual([secure.status, secure.body], [200, "alice's site\n"]);
      assert.equal((await domain("alice-parked.example")).ssl.status, "active");
    });

    test("a name the CA cannot validate: `failed` with the reason, the working certificate stays; deleting the name heals it", async () => {
      await pebble.servfail("alice-broken.example");
      const main = await domain("alice.example");
      const parked = await alice().post("/api/client/domains", { domain: "alice-broken.example", domain_type: "parked", parked_on_domain_id: main.id });
      assert.equal(parked.status, 201, JSON.stringify(parked.body));
      const ssl = await waitUntil("the failure recorded", async () => {
        const state = (await domain("alice.example")).ssl;
        return state.status === "failed" && state;
      });
      assert.match(ssl.error, /alice-broken\.example: validation failed: .*could not resolve/);
      assert.ok(ssl.expires_at, "the certificate in service is still reported");
      const secure = await fetchAs(httpsPort, "alice.example", pebble.issuanceRoot);
      assert.deepEqual(secure.names, ["alice-parked.example", "alice.example", "www.alice.example"]);
      if (env.db) {
        // Backed off: the next attempt is a quarter of an hour away, not the next check.
        const [row] = await env.db.select().from(domainCertificates).where(and(eq(domainCertificates.domainId, main.id), eq(domainCertificates.kind, "site")));
        assert.equal(row.failures, 1);
        const waitS = (row.nextAttemptAt!.getTime() - Date.now()) / 1000;
        assert.ok(waitS > 14 * 60 && waitS <= 15 * 60, String(waitS));
      }

      // The failing name deleted: the certificate in service covers every name again.
      assert.equal((await alice().delete(`/api/client/domains/${parked.body.id}`)).status, 200);
      const healed = await waitUntil("the failure cleared", async () => {
        const state = (await domain("alice.example")).ssl;
        return state.status === "active" && state;
      });
      assert.equal(healed.error, null);
    });

    test("a mail domain: its site answers the challenge for mail.<domain>, which gets a certificate of its own; the site's keeps its names", async () => {
      const made = await alice().post("/api/client/email/domains", { domain: "alice.example" });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const ssl = await waitUntil("the mail host's certificate", async () => {
        const [mailDomain] = (await alice().get("/api/client/email/domains")).body;
        assert.notEqual(mailDomain.ssl.status, "failed", mailDomain.ssl.error);
        return mailDomain.ssl.status === "active" && mailDomain.ssl;
      });
      assert.ok(Date.parse(ssl.expires_at) > Date.now() + 86_400_000);
      const secure = await fetchAs(httpsPort, "alice.example", pebble.issuanceRoot);
      assert.deepEqual(secure.names, ["alice-parked.example", "alice.example", "www.alice.example"]);
      assert.equal((await domain("alice.example")).ssl.status, "active");
    });
  });
}
