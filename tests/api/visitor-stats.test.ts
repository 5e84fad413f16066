import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { AppError } from "@/lib/errors";
import { runGoaccess } from "@/lib/provisioning/goaccess";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { seedTenants } from "../support/seed";

// Visitor statistics with the real GoAccess over generated combined-format logs.

function writeLog(file: string, lines: number) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const agents = ["Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0", "Mozilla/5.0 (Windows NT 10.0) Chrome/119.0", "curl/8.0"];
  const out = fs.createWriteStream(file);
  const chunk: string[] = [];
  for (let i = 0; i < lines; i++) {
    const ip = `192.0.2.${i % 200}`;
    const day = String(1 + (i % 28)).padStart(2, "0");
    chunk.push(`${ip} - - [${day}/Oct/2026:13:55:36 +0000] "GET /page${i % 50} HTTP/1.1" ${i % 10 === 0 ? 404 : 200} ${1000 + i} "-" "${agents[i % 3]}"`);
    if (chunk.length === 10_000) out.write(`${chunk.splice(0).join("\n")}\n`);
  }
  out.write(chunk.length ? `${chunk.join("\n")}\n` : "");
  return new Promise((resolve) => out.end(resolve));
}

const logDir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-logs-"));

before(async () => {
  await writeLog(path.join(logDir, "alice", "alice.example.log"), 500);
  await writeLog(path.join(logDir, "alice", "shop.alice.example.log"), 300);
});

for (const backend of machineBackends("pglite")) {
  describe(`visitor statistics (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seedTenants>>>;
    before(async () => {
      env = await createEnvironment(backend, seedTenants, { ACCESS_LOG_DIR: logDir });
    });
    after(async () => {
      await env?.teardown();
    });

    test("a domain's report is GoAccess's JSON over that domain's log", async () => {
      const response = await apiClient(env.server.baseUrl, env.seed.aliceKey).get("/api/client/account/visitor-stats?domain=alice.example");
      assert.equal(response.status, 200);
      assert.equal(response.body.general.total_requests, 500);
      for (const key of ["general", "visitors", "requests", "not_found", "hosts", "browsers", "status_codes"]) assert.ok(key in response.body, key);
    });

    test("without ?domain, the account's combined report over all its logs", async () => {
      const response = await apiClient(env.server.baseUrl, env.seed.aliceKey).get("/api/client/account/visitor-stats");
      assert.equal(response.status, 200);
      assert.equal(response.body.general.total_requests, 800);
    });

    test("404 for another account's domain, an unknown domain, and an account without logs", async () => {
      const alice = apiClient(env.server.baseUrl, env.seed.aliceKey);
      assert.equal((await alice.get("/api/client/account/visitor-stats?domain=bob.example")).status, 404);
      assert.equal((await alice.get("/api/client/account/visitor-stats?domain=nowhere.example")).status, 404);
      const bob = apiClient(env.server.baseUrl, env.seed.bobKey);
      assert.equal((await bob.get("/api/client/account/visitor-stats?domain=bob.example")).status, 404, "no log");
      assert.equal((await bob.get("/api/client/account/visitor-stats")).status, 404);
    });

    test("422 when GoAccess fails on a log, with the error and an (empty) errors map like every 422", async () => {
      const alice = apiClient(env.server.baseUrl, env.seed.aliceKey);
      const name = `garbled-${env.backend}.example`;
      assert.equal((await alice.post("/api/client/domains", { domain: name, domain_type: "domain" })).status, 201);
      const log = path.join(logDir, "alice", `${name}.log`);
      fs.writeFileSync(log, "not a combined log line\n");
      try {
        const response = await alice.get(`/api/client/account/visitor-stats?domain=${name}`);
        assert.equal(response.status, 422);
        assert.match(response.body.error, /GoAccess could not analyse/);
        assert.deepEqual(response.body.errors, {});
      } finally {
        fs.rmSync(log);
      }
    });
  });
}

test("a 200,000-line log is analysed in a child process: the event loop keeps ticking", async () => {
  const big = path.join(logDir, "big.log");
  await writeLog(big, 200_000);
  let worstLag = 0;
  let last = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    worstLag = Math.max(worstLag, now - last - 20);
    last = now;
  }, 20);
  try {
    const report = JSON.parse(await runGoaccess([await fs.promises.open(big)]));
    assert.equal(report.general.total_requests, 200_000);
  } finally {
    clearInterval(timer);
  }
  // GoAccess itself needs seconds here; a blocked loop would show a lag of that size.
  assert.ok(worstLag < 1000, `event loop blocked for ${worstLag} ms`);
});

test("422 saying so when GoAccess is missing", async () => {
  const log = await fs.promises.open(path.join(logDir, "alice", "alice.example.log"));
  try {
    await assert.rejects(runGoaccess([log], "/nonexistent/goaccess"), (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.code, "VALIDATION");
      assert.match(error.message, /GoAccess is not installed/);
      return true;
    });
  } finally {
    await log.close();
  }
});
