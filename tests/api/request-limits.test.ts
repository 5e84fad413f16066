import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient, type Credentials } from "../support/http";
import { seedTenants } from "../support/seed";

// Request bodies are bounded at 1 MiB (DESIGN.md "HTTP contract"): refused from Content-Length
// before a byte is read, and while streaming when no length is announced, so oversized bodies
// can neither exhaust the server's memory nor stall other requests.

const MiB = 1024 * 1024;

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * POSTs `totalBytes` of a JSON-looking body in 64 KiB chunks (chunked encoding, or with a
 * Content-Length when `announce`), stopping as soon as the server answers.
 */
function postBig(baseUrl: string, path: string, totalBytes: number, options: { credentials?: Credentials; announce?: boolean } = {}) {
  return new Promise<RawAnswer>((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { "content-type": "application/json" };
    if (options.credentials) {
      headers["x-api-key"] = options.credentials.key;
      headers["x-api-secret"] = options.credentials.secret;
    }
    if (options.announce) headers["content-length"] = totalBytes;
    // A connection of its own: the server closes one whose body it left unread.
    const request = http.request(`${baseUrl}${path}`, { method: "POST", headers, agent: false });
    let answered = false;
    request.on("response", (response) => {
      answered = true;
      // Stop sending: the rest of the body is not wanted.
      response.once("end", () => request.destroy());
      let body = "";
      response.on("data", (chunk) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      response.on("error", reject);
    });
    // Once answered, the server may close the connection under a body still being sent.
    request.on("error", (error) => answered || reject(error));
    const chunk = Buffer.alloc(64 * 1024, "a");
    let sent = 0;
    const writeMore = () => {
      while (!answered && sent < totalBytes) {
        const piece = sent === 0 ? Buffer.concat([Buffer.from('{"x":"'), chunk.subarray(6)]) : chunk;
        sent += piece.length;
        if (!request.write(piece)) return void request.once("drain", writeMore);
      }
      if (!answered) request.end();
    };
    writeMore();
  });
}

for (const backend of machineBackends("pglite")) {
  describe(`request limits (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seedTenants>>>;
    before(async () => {
      env = await createEnvironment(backend, seedTenants);
    });
    after(async () => {
      await env?.teardown();
    });

    test("a body announced larger than 1 MiB is 413 before anything else, even without credentials", async () => {
      const answer = await postBig(env.server.baseUrl, "/api/client/dns-records", 2 * MiB, { announce: true });
      assert.equal(answer.status, 413);
      assert.deepEqual(JSON.parse(answer.body), { error: "The request body is larger than 1 MiB" });
      assert.equal(answer.headers["x-content-type-options"], "nosniff", "the security headers are on a 413 too");
      assert.equal(answer.headers["cache-control"], "no-store");
    });

    test("a chunked body is refused with 413 once it passes 1 MiB", async () => {
      const answer = await postBig(env.server.baseUrl, "/api/client/dns-records", 8 * MiB, { credentials: env.seed.aliceKey });
      assert.equal(answer.status, 413);
      assert.deepEqual(JSON.parse(answer.body), { error: "The request body is larger than 1 MiB" });
    });

    test("a body just under 1 MiB is read and judged on its content", async () => {
      const domainId = (await apiClient(env.server.baseUrl, env.seed.aliceKey).get("/api/client/domains")).body[0].id;
      const body = { domain_id: domainId, name: "big", type: "TXT", content: "x".repeat(MiB - 200), ttl: 300 };
      const answer = await apiClient(env.server.baseUrl, env.seed.aliceKey).post("/api/client/dns-records", body);
      assert.notEqual(answer.status, 413);
      assert.ok(answer.status < 500, `answered ${answer.status}`);
    });

    test("a client that stalls in its headers loses its connection after 10 s (408), not 60 s", async () => {
      const socket = net.connect(env.server.port, "127.0.0.1");
      const started = performance.now();
      socket.write("POST /api/client/dns-records HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl");
      let answer = "";
      socket.on("data", (chunk) => (answer += chunk));
      await new Promise((resolve) => socket.once("close", resolve));
      const seconds = (performance.now() - started) / 1000;
      assert.match(answer, /^HTTP\/1\.1 408/);
      assert.ok(seconds >= 9 && seconds < 13, `closed after ${seconds.toFixed(1)} s`);
    });

    test("16 concurrent 56 MB bodies leave the server alive and answering others promptly", async () => {
      const alice = apiClient(env.server.baseUrl, env.seed.aliceKey);
      const floods = Array.from({ length: 16 }, (_, i) =>
        postBig(env.server.baseUrl, "/api/client/dns-records", 56 * MiB, { credentials: env.seed.aliceKey, announce: i % 2 === 0 }),
      );
      const started = performance.now();
      const other = await alice.get("/api/client/domains");
      const otherMs = performance.now() - started;
      const answers = await Promise.all(floods);
      assert.deepEqual(
        answers.map((answer) => answer.status),
        Array(16).fill(413),
      );
      assert.equal(other.status, 200);
      assert.ok(otherMs < 2000, `another request was answered in ${Math.round(otherMs)} ms`);
      assert.equal(env.server.process.exitCode, null, "the server is still running");
      assert.equal((await alice.get("/api/client/domains")).status, 200);
    });
  });
}
