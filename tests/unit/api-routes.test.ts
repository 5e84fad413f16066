import assert from "node:assert/strict";
import { test } from "node:test";
import { matchApiRoute, operations } from "@/lib/http/registry";

// The 404/405 table server.ts consults before Next.js (built once from the registry).

test("every operation's method and path is found, its path template filled with an id", () => {
  for (const operation of operations) {
    const path = operation.path.replace(/\{[^}]+\}/g, "7");
    assert.deepEqual(matchApiRoute(operation.method, path), { kind: "found" }, `${operation.method} ${path}`);
    assert.deepEqual(matchApiRoute(operation.method, `${path}/`), { kind: "found" }, `${operation.method} ${path}/`);
  }
});

test("405 with Allow (HEAD beside GET) for a known path and a wrong method", () => {
  assert.deepEqual(matchApiRoute("PATCH", "/api/client/databases"), { kind: "wrong_method", allow: ["GET", "POST", "HEAD"] });
  const one = matchApiRoute("POST", "/api/client/domains/3");
  assert.equal(one.kind, "wrong_method");
  assert.ok(one.kind === "wrong_method" && one.allow.includes("HEAD") && !one.allow.includes("POST"), JSON.stringify(one));
  assert.deepEqual(matchApiRoute("HEAD", "/api/client/domains"), { kind: "found" });
});

test("404 for unknown paths, extra segments and empty ids", () => {
  for (const path of ["/api", "/api/", "/api/nope", "/api/client/domains//", "/api/client/domains/1/extra", "/api/client/domains//1"]) {
    assert.deepEqual(matchApiRoute("GET", path), { kind: "not_found" }, path);
  }
});

test("the OpenAPI document and next-auth are found outside the registry", () => {
  assert.deepEqual(matchApiRoute("GET", "/api/openapi.json"), { kind: "found" });
  assert.deepEqual(matchApiRoute("POST", "/api/openapi.json"), { kind: "wrong_method", allow: ["GET", "HEAD"] });
  assert.deepEqual(matchApiRoute("POST", "/api/auth/callback/credentials"), { kind: "found" });
});
