import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { type Cluster, createCluster } from "../support/cluster";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { seedTenants } from "../support/seed";

// The panel through PostgreSQL restarts (DESIGN.md "HTTP contract"), on a cluster of the test's
// own, under 8 parallel writers: while the database is away every answer is a quick 503 with
// Retry-After, never a hang or a 500; within 5 s of its return the panel serves again, with no
// restart of its own; every acknowledged write is there afterwards; the metrics collector keeps
// storing samples. postgres.js 3.4.9 does not fail on every restart, so there are three.

const WRITERS = 8;
const REQUEST_LIMIT_MS = 5000;
const RECOVERY_LIMIT_MS = 5000;

interface Answer {
  at: number;
  ms: number;
  status: number | "hang";
  retryAfter: string | null;
  body: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the panel through database restarts (postgres)", { skip: !testBackends().includes("postgres") }, () => {
  let cluster: Cluster;
  let env: TestEnvironment<Awaited<ReturnType<typeof seedTenants>>>;
  const previousUrl = process.env.TEST_POSTGRES_URL;
  before(async () => {
    cluster = await createCluster();
    process.env.TEST_POSTGRES_URL = cluster.url;
    env = await createEnvironment("postgres", seedTenants, { METRICS_INTERVAL_S: "1" });
  });
  after(async () => {
    try {
      await env?.teardown();
    } finally {
      await cluster?.remove();
      if (previousUrl === undefined) delete process.env.TEST_POSTGRES_URL;
      else process.env.TEST_POSTGRES_URL = previousUrl;
    }
  });

  test("503 while it is away, service within 5 s after, nothing acknowledged lost", async () => {
    const alice = apiClient(env.server.baseUrl, env.seed.aliceKey);
    const domainId = (await alice.get("/api/client/domains")).body[0].id as number;
    const answers: Answer[] = [];
    const acknowledged = new Map<number, string>();
    let stopped = false;

    async function write(name: string) {
      const started = performance.now();
      try {
        const response = await fetch(`${env.server.baseUrl}/api/client/dns-records`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": env.seed.aliceKey.key, "x-api-secret": env.seed.aliceKey.secret },
          body: JSON.stringify({ domain_id: domainId, name, type: "TXT", content: name, ttl: 300 }),
          signal: AbortSignal.timeout(15_000),
        });
        const body = await response.text();
        answers.push({ at: performance.now(), ms: performance.now() - started, status: response.status, retryAfter: response.headers.get("retry-after"), body });
        if (response.status === 201) acknowledged.set(JSON.parse(body).id, name);
      } catch {
        answers.push({ at: performance.now(), ms: performance.now() - started, status: "hang", retryAfter: null, body: "" });
      }
    }
    const writers = Array.from({ length: WRITERS }, async (_, writer) => {
      for (let n = 0; !stopped; n++) {
        await write(`w${writer}-${n}`);
        await sleep(20);
      }
    });

    /** Milliseconds from `since` to the first 201 after it (while the writers run). */
    async function recoveryFrom(since: number): Promise<number> {
      for (let waited = 0; waited < 20_000; waited += 50) {
        const ok = answers.find((answer) => answer.at > since && answer.status === 201);
        if (ok) return ok.at - since;
        await sleep(50);
      }
      return Infinity;
    }
    /** Milliseconds from `since` until the collector stored a sample taken after it. */
    async function metricsRecoveryFrom(since: Date, sinceMs: number): Promise<number> {
      for (;;) {
        const rows = await env.db!.execute(sql`select count(*)::int as n from metric_samples where taken_at > ${since.toISOString()}`);
        if (Number((rows as unknown as { n: number }[])[0].n) > 0) return performance.now() - sinceMs;
        if (performance.now() - sinceMs > 20_000) return Infinity;
        await sleep(200);
      }
    }

    const recoveries: number[] = [];
    const metricsRecoveries: number[] = [];
    try {
      await sleep(1500);
      for (let cycle = 0; cycle < 3; cycle++) {
        if (cycle === 0) {
          await cluster.restart();
        } else {
          await cluster.stop();
          await sleep(2000);
          await cluster.start();
        }
        const backAt = performance.now();
        const backDate = new Date();
        recoveries.push(await recoveryFrom(backAt));
        metricsRecoveries.push(await metricsRecoveryFrom(backDate, backAt));
        await sleep(1500);
      }
    } finally {
      stopped = true;
      await Promise.all(writers);
    }
    console.log(
      `recovery after each restart: API ${recoveries.map((ms) => Math.round(ms)).join(", ")} ms; ` +
        `metrics ${metricsRecoveries.map((ms) => Math.round(ms)).join(", ")} ms; ` +
        `${answers.length} writes: ${answers.filter((a) => a.status === 201).length} × 201, ${answers.filter((a) => a.status === 503).length} × 503`,
    );

    const unexpected = answers.filter((answer) => answer.status !== 201 && answer.status !== 503);
    assert.deepEqual(unexpected, [], "every answer is a 201 or a 503, none hung");
    const unavailable = answers.filter((answer) => answer.status === 503);
    assert.ok(unavailable.length > 0, "the stops were seen as 503s");
    for (const answer of unavailable) {
      assert.deepEqual(JSON.parse(answer.body), { error: "The database is unavailable; try again shortly" });
      assert.match(answer.retryAfter ?? "", /^\d+$/, "a 503 says when to retry");
    }
    const slowest = Math.max(...answers.map((answer) => answer.ms));
    assert.ok(slowest < REQUEST_LIMIT_MS, `the slowest answer took ${Math.round(slowest)} ms`);
    for (const ms of recoveries) assert.ok(ms < RECOVERY_LIMIT_MS, `API served again ${Math.round(ms)} ms after the database was back`);
    for (const ms of metricsRecoveries) assert.ok(ms < RECOVERY_LIMIT_MS, `metrics stored again ${Math.round(ms)} ms after the database was back`);

    const stored = (await alice.get(`/api/client/dns-records?domain_id=${domainId}`)).body as { id: number; name: string }[];
    const storedNames = new Map(stored.map((record) => [record.id, record.name]));
    for (const [id, name] of acknowledged) assert.equal(storedNames.get(id), name, `acknowledged record ${id} (${name}) is stored`);

    assert.doesNotMatch(env.server.output(), /uncaughtException|unhandledRejection|TypeError/);
    assert.equal(env.server.process.exitCode, null, "the panel kept running");
  });

  // The session key is read from the database once per process: a first read made while the
  // database was away must not be remembered as a failure until the panel is restarted.
  test("sign-in and the admin check work again when their first use came while the database was away", async () => {
    const base = env.server.baseUrl;
    const adminWithStaleCookie = () =>
      fetch(`${base}/admin`, { redirect: "manual", headers: { cookie: "next-auth.session-token=stale" } });
    const csrf = () => fetch(`${base}/api/auth/csrf`);
    await cluster.stop();
    try {
      assert.notEqual((await csrf()).status, 200, "no sign-in while the database is away");
      await adminWithStaleCookie();
    } finally {
      await cluster.start();
    }
    const backAt = performance.now();
    let signIn = await csrf();
    let admin = await adminWithStaleCookie();
    while ((signIn.status !== 200 || admin.status !== 307) && performance.now() - backAt < RECOVERY_LIMIT_MS) {
      await sleep(200);
      [signIn, admin] = [await csrf(), await adminWithStaleCookie()];
    }
    assert.equal(signIn.status, 200, "the sign-in form's token is served again");
    assert.ok((await signIn.json()).csrfToken);
    assert.equal(admin.status, 307, "a stale cookie is sent to sign in again, not answered 500");
    assert.match(admin.headers.get("location") ?? "", /\/login\?callbackUrl=/);
  });
});
