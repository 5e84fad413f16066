import assert from "node:assert/strict";
import { test } from "node:test";
import { addressSubject, emailSubject } from "@/lib/admin-session/sign-in-throttle";
import { keptNameProblem } from "@/lib/domains/names";
import { withinCaps } from "@/lib/php-settings/rows";
import { DEFAULT_PHP_SETTINGS } from "@/lib/php-settings/schemas";

// The pure rules behind three tenancy walls: which address a sign-in is counted under, which
// domain names the server keeps, and the PHP settings a plan lets an account run with.

test("an IPv6 client is counted by its /64, however it is written; IPv4 by itself", () => {
  const net = "address:2001:db8:0:7::/64";
  for (const address of ["2001:db8:0:7::1", "2001:0db8:0000:0007:ffff:ffff:ffff:ffff", "2001:db8::7:0:0:0:1", "2001:db8:0:7::192.0.2.1"]) {
    assert.equal(addressSubject(address), net, address);
  }
  assert.equal(addressSubject("2001:db8:0:8::1"), "address:2001:db8:0:8::/64");
  assert.equal(addressSubject("::1"), "address:0:0:0:0::/64");
  assert.equal(addressSubject("203.0.113.7"), "address:203.0.113.7");
  assert.equal(emailSubject(" Admin@Example.com "), emailSubject("admin@example.com"), "one count per e-mail, whatever its case");
});

test("the server's names, names inside and around them, and local names are kept; others are not", () => {
  const kept = ["panel.hosting.test", "ns1.dns.test", "ssh.hosting.test"];
  for (const name of ["panel.hosting.test", "www.panel.hosting.test", "hosting.test", "ns1.dns.test", "dns.test", "a.ns1.dns.test", "ssh.hosting.test"]) {
    assert.ok(keptNameProblem(name, kept), name);
  }
  for (const name of ["app.localhost", "localhost.localdomain", "nas.local", "x.y.localhost"]) assert.match(keptNameProblem(name, [])!, /local name/, name);
  for (const name of ["panel.example", "hosting-test.example", "panelhosting.test", "ns1.dns.test.example", "localhost.example"]) {
    assert.equal(keptNameProblem(name, kept), null, name);
  }
});

test("PHP settings in force are the account's own lowered into its plan's caps, never raised", () => {
  const settings = { ...DEFAULT_PHP_SETTINGS, upload_max_filesize_mb: 32, post_max_size_mb: 48 };
  assert.deepEqual(withinCaps(settings, { maxPhpMemoryMb: 128, maxPhpUploadMb: 16 }), { ...settings, upload_max_filesize_mb: 16, post_max_size_mb: 16, memory_limit_mb: 128 });
  assert.deepEqual(withinCaps(settings, { maxPhpMemoryMb: null, maxPhpUploadMb: 40 }), { ...settings, post_max_size_mb: 40 });
  assert.deepEqual(withinCaps(settings, { maxPhpMemoryMb: null, maxPhpUploadMb: null }), settings);
});
