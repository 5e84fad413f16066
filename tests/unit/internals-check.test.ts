import assert from "node:assert/strict";
import { test } from "node:test";
import { internalsIn } from "../support/internals";

// The check every suite's errors and warnings go through (tests/support/http.ts) must catch what
// has leaked before, and let ordinary messages through.

test("queries, driver messages, stack frames and paths are caught", () => {
  const leaks = {
    "a query": 'Saved, but the zone file could not be written: Failed query: select "id", "domain" from "domains" where "id" = $1\nparams: 1',
    "a driver message": "connect ECONNREFUSED 127.0.0.1:5432",
    "a stack frame": "TypeError: x is undefined\n    at loadZone (lib/dns/zone-file-sync.ts:8:3)",
    "a file path": "EACCES: permission denied, open '/var/lib/panel/zones/a.example.zone'",
  };
  for (const [kind, text] of Object.entries(leaks)) assert.ok(internalsIn(text).includes(kind), `${kind} in ${text}`);
});

test("ordinary errors and warnings pass", () => {
  for (const text of [
    '{"error":"No API operation at /api/client/nothing"}',
    '{"error":"The database is unavailable; try again shortly"}',
    '{"error":"Validation failed: name: \\"www\\" already has a CNAME record, which must stand alone","errors":{"name":["x"]}}',
    '{"warning":"Saved, but the zone reload failed; the panel\'s log says why"}',
    '{"error":"POST /api/client/domains could not complete because of an internal error"}',
  ]) {
    assert.deepEqual(internalsIn(text), [], text);
  }
});
