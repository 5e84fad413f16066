import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { isNull, sql } from "drizzle-orm";
import { ssoTokens } from "@/db/schema";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient, call } from "../support/http";
import { seedTenants } from "../support/seed";

// Admin operations over HTTP: real figures of this machine from the collector, the 60 s cache
// and its control, and single sign-on links.

const isInt = (value: unknown) => Number.isInteger(value);
const isNumber = (value: unknown) => typeof value === "number" && Number.isFinite(value);

for (const backend of testBackends()) {
  describe(`metrics and SSO (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seedTenants>>>;
    before(async () => {
      env = await createEnvironment(backend, seedTenants, { METRICS_INTERVAL_S: "2" });
      // The collector samples a second after start, then every 2 s: wait for a few samples.
      await new Promise((resolve) => setTimeout(resolve, 5500));
    });
    after(async () => {
      await env?.teardown();
    });
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);

    test("history: real samples, newest first, SPEC's fields and types, limit 1–100", async () => {
      const history = await admin().get("/api/metrics/history?limit=3");
      assert.equal(history.status, 200);
      assert.ok(history.body.length >= 2, `samples collected: ${history.body.length}`);
      for (const record of history.body) {
        assert.ok(isInt(record.id) && isInt(record.timestamp));
        assert.ok(record.timestamp > Date.now() - 60_000, "milliseconds");
        for (const field of ["cpu_percent", "ram_percent", "ram_total_mb", "ram_used_mb", "ram_free_mb"]) {
          assert.ok(isNumber(record[field]), field);
        }
        assert.ok(record.ram_total_mb > 100, "real RAM size");
      }
      assert.ok(history.body[0].timestamp >= history.body[1].timestamp, "newest first");
      for (const limit of ["0", "101", "abc", "-1"]) {
        const bad = await admin().get(`/api/metrics/history?limit=${limit}`);
        assert.equal(bad.status, 422, limit);
        assert.equal(typeof bad.body.error, "string");
      }
    });

    test("the cache serves the same data for 60 s; clear-cache makes the next read fresh", async () => {
      await admin().post("/api/metrics/clear-cache", {});
      const first = await admin().get("/api/metrics/history");
      assert.ok(first.body.length <= 15);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const cachedRead = await admin().get("/api/metrics/history");
      assert.deepEqual(cachedRead.body, first.body, "cached");
      const otherLimit = await admin().post("/api/metrics/clear-cache", { limit: 5 });
      assert.equal(otherLimit.status, 200);
      assert.deepEqual((await admin().get("/api/metrics/history")).body, first.body, "limit 5 cleared, not 15");
      const cleared = await admin().post("/api/metrics/clear-cache");
      assert.equal(cleared.status, 200);
      assert.equal(typeof cleared.body.message, "string");
      const fresh = await admin().get("/api/metrics/history");
      assert.notEqual(fresh.body[0].id, first.body[0].id, "a newer sample after clearing");
      assert.equal((await admin().post("/api/metrics/clear-cache", { clear_stats: "yes" })).status, 422);
    });

    test("stats: SPEC's shape, integers where SPEC says integer", async () => {
      const response = await admin().post("/api/metrics/clear-cache", { clear_stats: true });
      assert.equal(response.status, 200);
      const { status, body } = await admin().get("/api/metrics/stats");
      assert.equal(status, 200);
      for (const group of [body.cpu, body.ram]) {
        assert.ok(isNumber(group.average) && isNumber(group.minimum) && isNumber(group.maximum));
        assert.ok(group.minimum <= group.average && group.average <= group.maximum);
      }
      assert.ok(body.cpu_cores.length >= 1);
      for (const core of body.cpu_cores) assert.ok(typeof core.core === "string" && isNumber(core.current));
      assert.ok(body.disks.length >= 1, "a mounted filesystem");
      for (const disk of body.disks) {
        for (const field of ["minimum", "maximum", "max_used_gb", "current_used_gb", "current_free_gb", "current_total_gb", "current_used_percentage"]) {
          assert.ok(isInt(disk[field]), field);
        }
        assert.ok(disk.current_total_gb > 0);
      }
      assert.ok(body.networks.length >= 1, "an interface");
      for (const network of body.networks) {
        for (const field of ["current_rx_bytes", "max_tx_packets", "total_rx_drops", "total_tx_errors"]) assert.ok(isInt(network[field]), field);
        assert.ok(isNumber(network.avg_rx_bytes));
      }
    });

    test("system-info: this machine, SPEC's fields", async () => {
      const { status, body } = await admin().get("/api/metrics/system-info");
      assert.equal(status, 200);
      assert.equal(body.platform, "linux");
      assert.ok(isInt(body.cpu.cores) && body.cpu.cores >= 1);
      assert.ok(isInt(body.memory.total) && body.memory.total > 0);
      assert.match(body.memory.percent, /^\d+\.\d{2}$/);
      assert.ok(isInt(body.uptime.seconds));
      assert.ok(body.networkInterfaces.some((i: { name: string }) => i.name === "lo"));
    });

    test("service-history: the panel itself is a service; limit ≥ 1, absent = all", async () => {
      await admin().post("/api/metrics/clear-cache", { clear_service_history: true });
      const all = await admin().get("/api/metrics/service-history");
      assert.equal(all.status, 200);
      assert.ok(all.body.some((row: { service_name: string }) => row.service_name === "hosting panel"));
      for (const row of all.body) assert.ok(isInt(row.process_count) && row.process_count >= 1);
      const one = await admin().get("/api/metrics/service-history?limit=1");
      assert.equal(one.body.length, 1);
      assert.ok(all.body.length >= one.body.length);
      assert.equal((await admin().get("/api/metrics/service-history?limit=0")).status, 422);
    });

    test("an SSO link signs the key's admin in once, then never again", async () => {
      const generated = await admin().post("/api/admin/generate-sso-token");
      assert.equal(generated.status, 200);
      const { sso_url: ssoUrl, redirect_url: redirectUrl, token } = generated.body;
      assert.match(ssoUrl, new RegExp(`/sso\\?token=${token}$`));
      assert.match(redirectUrl, /\/admin$/);
      const path = new URL(ssoUrl).pathname + new URL(ssoUrl).search;
      const first = await fetch(`${env.server.baseUrl}${path}`, { redirect: "manual" });
      assert.equal(first.status, 303);
      assert.match(first.headers.get("location") ?? "", /\/admin$/);
      const cookie = first.headers.get("set-cookie") ?? "";
      assert.match(cookie, /next-auth\.session-token=/);
      const session = await fetch(`${env.server.baseUrl}/api/auth/session`, { headers: { cookie: cookie.split(";")[0] } });
      assert.equal((await session.json()).user.email, "admin@example.com");
      const second = await fetch(`${env.server.baseUrl}${path}`, { redirect: "manual" });
      assert.equal(second.status, 410);
      assert.equal(second.headers.get("set-cookie"), null);
      const unknown = await fetch(`${env.server.baseUrl}/sso?token=nope`, { redirect: "manual" });
      assert.equal(unknown.status, 401);
    });

    // Ageing a token needs the database beside the running server: PostgreSQL only.
    if (backend === "postgres") test("an expired SSO link signs nobody in", async () => {
      const generated = await admin().post("/api/admin/generate-sso-token");
      await env.db!.update(ssoTokens).set({ expiresAt: sql`now() - interval '1 second'` }).where(isNull(ssoTokens.usedAt));
      const response = await fetch(generated.body.sso_url.replace(/^https?:\/\/[^/]+/, env.server.baseUrl), { redirect: "manual" });
      assert.equal(response.status, 410);
      assert.match(await response.text(), /expired/);
    });

    test("403 for reseller and account keys; 401 without credentials", async () => {
      assert.equal((await apiClient(env.server.baseUrl, env.seed.resellerKey).post("/api/admin/generate-sso-token")).status, 403);
      assert.equal((await call(env.server.baseUrl, "GET", "/api/metrics/stats")).status, 401);
    });
  });
}
