import assert from "node:assert/strict";
import { test } from "node:test";
import { runCommand } from "@/lib/provisioning/system";
import { renderZoneFile } from "@/lib/provisioning/zone-files";

// The zone-file renderer and ZONE_RELOAD_COMMAND (files themselves are checked with
// named-checkzone in tests/api/client-dns-domains.test.ts).

test("the reload command runs without a shell with {zone} replaced; its failure is reported", async () => {
  assert.equal(await runCommand("test {zone} = alice.example", { zone: "alice.example" }), null);
  assert.match((await runCommand("false {zone}", { zone: "alice.example" }))!, /exited with 1/);
  assert.match((await runCommand("/nonexistent/rndc reload {zone}", { zone: "alice.example" }))!, /ENOENT/);
});

test("TXT content is quoted, escaped and split into 255-byte strings", () => {
  const zone = renderZoneFile({
    domain: "alice.example",
    serial: 2026112301,
    records: [{ name: "@", type: "TXT", content: `say "hi" \\ ${"x".repeat(300)}`, ttl: 300, priority: null, weight: null, port: null }],
  });
  const line = zone.split("\n").find((row) => row.includes("TXT"))!;
  assert.match(line, /"say \\"hi\\" \\\\ x+" "x+"/);
});
