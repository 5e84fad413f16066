import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { AppError } from "@/lib/errors";
import { renderSite, type Site, type SiteSettings } from "@/lib/provisioning/nginx";
import { DEFAULT_PHP_SETTINGS } from "@/lib/php-settings/schemas";
import { type Pool, poolFilePath, poolSocketPath, renderPool } from "@/lib/provisioning/php-fpm";
import { renderZoneFile, type Zone, type ZoneRecord } from "@/lib/provisioning/zone-files";

// The renderers' own checks (lib/provisioning/render-checks.ts), fed directly with what no request
// schema would let through: a value stored by an older version or written to the database by
// hand reaches the renderer without passing a schema. Every field of every renderer, each hostile
// character, paths leaving their roots; and normal values still render byte for byte what the
// renderers wrote before these checks (tests/unit/fixtures/rendered/, made by the old code, then
// changed only by the lines later features added: client_max_body_size, the front controller,
// the PHP settings, and the lighter server block of the 10,000-domain start: root and the
// access log named by $server_name in every block, try_files at the server's level, one
// location refusing .php sources and dot files when there is no PHP; disable_symlinks, so that
// nginx follows no link to another owner's file).

const FIXTURES = path.join(import.meta.dirname, "fixtures", "rendered");
const fixture = (name: string) => fs.readFileSync(path.join(FIXTURES, name), "utf8");

/** Characters that end a line, a string, a directive or a block, or start a comment or a variable somewhere. */
const HOSTILE = ["\n", "\r", "\0", '"', "'", "`", ";", "{", "}", "#", "$", "\\", " ", "\t", "%", "=", "(", ")"];

/** Each hostile character inside the value, and a whole injected directive after it. */
const hostileVariants = (normal: string, at = Math.ceil(normal.length / 2)) => [
  ...HOSTILE.map((character) => normal.slice(0, at) + character + normal.slice(at)),
  `${normal};\n}\nserver { listen 80; root /; }\n#`,
  `${normal}\n$INCLUDE /etc/shadow`,
];

/** A refusal: a plain Error (a server fault, never an AppError a client would read) naming the renderer and the kind of value. */
function assertRefused(render: () => unknown, renderer: string, kind: string, value: unknown) {
  assert.throws(
    render,
    (error: unknown) => {
      assert.ok(error instanceof Error, "an Error");
      assert.ok(!(error instanceof AppError), "not an AppError: its message would reach the client");
      assert.ok(error.message.startsWith(`${renderer}: `), `names the renderer: ${error.message}`);
      assert.ok(error.message.includes(kind), `names the ${kind}: ${error.message}`);
      assert.ok(!/[\n\r\0]/.test(error.message), "the value is quoted in the message, not written raw into the log");
      return true;
    },
    `${renderer} must refuse the ${kind} ${JSON.stringify(value)}`,
  );
}

// nginx -----------------------------------------------------------------------------------------

const roots = { homes: "/home", phpSockets: "/run/php", certificates: "/srv/panel/certs" };
const settings: SiteSettings = { httpPort: 8080, httpsPort: 8443, acmeChallengeDir: "/srv/panel/acme-challenge", roots };
const tls = { certificatePath: "/srv/panel/certs/alice.example/fullchain.pem", keyPath: "/srv/panel/certs/alice.example/privkey.pem" };
const site: Site = {
  domain: "alice.example",
  username: "alice",
  serverNames: ["alice.example", "www.alice.example", "alice-parked.example"],
  documentRoot: "/home/alice/public_html/alice.example",
  accessLog: "/home/alice/logs/alice.example.log",
  errorLog: "/home/alice/logs/nginx-error.log",
  profile: "php",
  phpSocket: "/run/php/alice-php8.2.sock",
  proxySocket: null,
  maxBodyMb: 64,
  suspended: false,
  tls,
};

test("normal values render the server blocks byte for byte as before the checks", () => {
  assert.equal(renderSite({ ...site, phpSocket: null, tls: null }, settings), fixture("site-plain.conf"));
  assert.equal(renderSite(site, settings), fixture("site-tls-php.conf"));
  const blog = {
    ...site,
    domain: "blog.alice.example",
    serverNames: ["blog.alice.example"],
    documentRoot: "/home/alice/public_html/blog.alice.example",
    accessLog: "/home/alice/logs/blog.alice.example.log",
    errorLog: "/home/alice/logs/nginx-error.log",
    suspended: true,
    tls: { certificatePath: "/srv/panel/certs/blog.alice.example/fullchain.pem", keyPath: "/srv/panel/certs/blog.alice.example/privkey.pem" },
  };
  assert.equal(renderSite(blog, { ...settings, httpPort: 80, httpsPort: 443 }), fixture("site-tls-443-suspended.conf"));
  assert.doesNotThrow(() => renderSite({ ...site, documentRoot: "/home/alice" }, settings), "the home itself may be a document root");
  assert.throws(() => renderSite({ ...site, documentRoot: "/home/alice/logs" }, settings), /logs\/ is never served/, "the home's logs/ is never served");
  assert.throws(() => renderSite({ ...site, documentRoot: "/home/alice/logs/x" }, settings), /logs\/ is never served/);
});

/** Every text field of a site and its settings: how to put a value there, and a normal value. */
const siteFields: { kind: string; normal: string; with: (value: string) => [Site, SiteSettings] }[] = [
  { kind: "domain", normal: site.domain, with: (value) => [{ ...site, domain: value }, settings] },
  { kind: "username", normal: site.username, with: (value) => [{ ...site, username: value }, settings] },
  { kind: "server name", normal: "www.alice.example", with: (value) => [{ ...site, serverNames: ["alice.example", value] }, settings] },
  { kind: "document root", normal: site.documentRoot, with: (value) => [{ ...site, documentRoot: value }, settings] },
  { kind: "access log", normal: site.accessLog, with: (value) => [{ ...site, accessLog: value }, settings] },
  { kind: "error log", normal: site.errorLog, with: (value) => [{ ...site, errorLog: value }, settings] },
  { kind: "PHP-FPM socket", normal: site.phpSocket!, with: (value) => [{ ...site, phpSocket: value }, settings] },
  { kind: "certificate", normal: tls.certificatePath, with: (value) => [{ ...site, tls: { ...tls, certificatePath: value } }, settings] },
  { kind: "certificate key", normal: tls.keyPath, with: (value) => [{ ...site, tls: { ...tls, keyPath: value } }, settings] },
  { kind: "ACME challenge directory", normal: settings.acmeChallengeDir, with: (value) => [site, { ...settings, acmeChallengeDir: value }] },
  { kind: "home root", normal: roots.homes, with: (value) => [site, { ...settings, roots: { ...roots, homes: value } }] },
  { kind: "root of the PHP-FPM socket", normal: roots.phpSockets, with: (value) => [site, { ...settings, roots: { ...roots, phpSockets: value } }] },
  { kind: "root of the certificate", normal: roots.certificates, with: (value) => [site, { ...settings, roots: { ...roots, certificates: value } }] },
];

test("every text field of a server block refuses each hostile character and an injected directive", () => {
  for (const field of siteFields) {
    assert.doesNotThrow(() => renderSite(...field.with(field.normal)), `the normal ${field.kind} renders`);
    for (const value of hostileVariants(field.normal)) assertRefused(() => renderSite(...field.with(value)), "nginx server block", field.kind, value);
  }
});

test("every path of a server block stays inside its root: no .., no ., no //, not relative, not a sibling", () => {
  const outside: Record<string, string[]> = {
    "document root": [
      "/home/alice/../bob/public_html",
      "/home/alice/./public_html",
      "/home/alice//public_html",
      "/home/alice/public_html/",
      "home/alice/public_html",
      "/home/bob/public_html",
      "/home/alicex/public_html",
      "/home",
      "/etc",
      "/",
      "",
    ],
    "access log": ["/var/log/panel/alice/../bob/x.log", "/var/log/panel/bob/x.log", "/var/log/panel/x.log", "/etc/passwd", "/var/log/panel/alice/.."],
    "PHP-FPM socket": ["/run/php/../mysqld/mysqld.sock", "/tmp/x.sock", "/run/phpx/a.sock", "run/php/a.sock"],
    certificate: ["/srv/panel/certs/../../../etc/ssl/private/key.pem", "/etc/ssl/certs/x.pem", "/srv/panel/certsx/a.pem"],
    "certificate key": ["/srv/panel/certs/a/../../../../root/.ssh/id_rsa", "/root/key.pem"],
    "ACME challenge directory": ["/srv/panel/../../etc", "srv/panel/acme", "/srv/panel/acme/"],
  };
  for (const [kind, values] of Object.entries(outside)) {
    const field = siteFields.find((candidate) => candidate.kind === kind)!;
    for (const value of values) assertRefused(() => renderSite(...field.with(value)), "nginx server block", kind, value);
  }
  assertRefused(() => renderSite({ ...site, username: "../bob" }, settings), "nginx server block", "username", "../bob");
  assertRefused(() => renderSite({ ...site, username: "bob" }, settings), "nginx server block", "document root", "another account's home");
});

test("the site profile, the proxy socket, the body size and the two switches: only their own kinds of value", () => {
  for (const profile of ["php;", "cgi", "", "proxy\n"]) {
    assertRefused(() => renderSite({ ...site, profile: profile as Site["profile"] }, settings), "nginx server block", "site profile", profile);
  }
  const proxied = { ...site, profile: "proxy" as const, phpSocket: null };
  assert.doesNotThrow(() => renderSite({ ...proxied, proxySocket: "/home/alice/run/app.sock" }, settings));
  for (const socket of [
    null,
    ...hostileVariants("/home/alice/run/app.sock"),
    "/home/alice/run/../../bob/run/app.sock",
    "/home/alice/run/./app.sock",
    "/home/alice/run:/etc/x",
    "/home/alice/run/sub/app.sock",
    "/home/bob/run/app.sock",
    `/home/alice/run/${"x".repeat(100)}`,
  ]) {
    assertRefused(() => renderSite({ ...proxied, proxySocket: socket }, settings), "nginx server block", "proxy socket", socket);
  }
  for (const size of [0, -1, 1.5, "64m; include /etc/passwd" as unknown as number]) {
    assertRefused(() => renderSite({ ...site, maxBodyMb: size }, settings), "nginx server block", "maximum body size", size);
  }
  for (const [field, kind] of [["suspended", "suspended"], ["readOnly", "read-only"]] as const) {
    for (const value of ["true", 1, null, "on; include /etc/passwd"]) {
      assertRefused(() => renderSite({ ...site, [field]: value as unknown as boolean }, settings), "nginx server block", kind, value);
    }
  }
});

test("server names and ports: no wildcard, regex or empty name, no port outside 1–65535", () => {
  for (const name of ["*.alice.example", "~^(.+)$", ".alice.example", "alice.example.", "-alice.example", "alice..example", "", "a".repeat(254)]) {
    assertRefused(() => renderSite({ ...site, serverNames: [name] }, settings), "nginx server block", "server name", name);
  }
  assertRefused(() => renderSite({ ...site, serverNames: [] }, settings), "nginx server block", "server names", []);
  for (const port of [0, -1, 65536, 80.5, Number.NaN, "80; include /etc/passwd" as unknown as number]) {
    assertRefused(() => renderSite(site, { ...settings, httpPort: port }), "nginx server block", "HTTP port", port);
    assertRefused(() => renderSite(site, { ...settings, httpsPort: port }), "nginx server block", "HTTPS port", port);
  }
});

// PHP-FPM --------------------------------------------------------------------------------------

const pool: Pool = { username: "alice", version: "8.2", user: "alice", listenGroup: "www-data", home: "/home/alice", settings: { ...DEFAULT_PHP_SETTINGS } };
const poolRoots = { homes: "/home", sockets: "/run/php" };
const socket = "/run/php/alice-php8.2.sock";

test("normal values render the pool byte for byte as before the checks", () => {
  assert.equal(renderPool(pool, socket, poolRoots), fixture("pool.conf"));
});

const poolFields: { kind: string; normal: string; with: (value: string) => Parameters<typeof renderPool> }[] = [
  { kind: "username", normal: pool.username, with: (value) => [{ ...pool, username: value }, socket, poolRoots] },
  { kind: "PHP version", normal: pool.version, with: (value) => [{ ...pool, version: value }, socket, poolRoots] },
  { kind: "user", normal: pool.user, with: (value) => [{ ...pool, user: value }, socket, poolRoots] },
  { kind: "listen group", normal: pool.listenGroup, with: (value) => [{ ...pool, listenGroup: value }, socket, poolRoots] },
  { kind: "home", normal: pool.home, with: (value) => [{ ...pool, home: value }, socket, poolRoots] },
  { kind: "socket", normal: socket, with: (value) => [pool, value, poolRoots] },
  { kind: "home root", normal: poolRoots.homes, with: (value) => [pool, socket, { ...poolRoots, homes: value }] },
  { kind: "root of the socket", normal: poolRoots.sockets, with: (value) => [pool, socket, { ...poolRoots, sockets: value }] },
];

test("every field of a pool refuses each hostile character and an injected line", () => {
  for (const field of poolFields) {
    assert.doesNotThrow(() => renderPool(...field.with(field.normal)), `the normal ${field.kind} renders`);
    for (const value of [...hostileVariants(field.normal), `${field.normal}\nphp_admin_value[open_basedir] = /`, `${field.normal}]\n[evil`]) {
      assertRefused(() => renderPool(...field.with(value)), "PHP-FPM pool", field.kind, value);
    }
  }
});

test("a pool's PHP settings: whole numbers within the server's maxima, display_errors on or off", () => {
  for (const [name, value] of [
    ["memory_limit_mb", 0],
    ["memory_limit_mb", 5000],
    ["upload_max_filesize_mb", "64M\nphp_admin_value[open_basedir] = /"],
    ["post_max_size_mb", 1.5],
    ["max_input_vars", -1],
    ["max_execution_time_s", Number.NaN],
  ] as const) {
    assertRefused(() => renderPool({ ...pool, settings: { ...pool.settings, [name]: value } }, socket, poolRoots), "PHP-FPM pool", name, value);
  }
  assertRefused(() => renderPool({ ...pool, settings: { ...pool.settings, display_errors: "on" as unknown as boolean } }, socket, poolRoots), "PHP-FPM pool", "display_errors", "on");
});

test("a pool's names and paths: Linux names only, its home is HOME_ROOT/<username>, its socket in PHP_FPM_SOCKET_DIR", () => {
  const refusals: [string, string[]][] = [
    ["username", ["root/..", "../alice", "-alice", "Alice", "a".repeat(33), "alice$", ""]],
    ["user", ["-root", "root:root", "alice$", "${USER}"]],
    ["listen group", ["www data", "-www-data"]],
    ["PHP version", ["8", "8.2.1", "8.2/../../etc", "8.x", "../8.2"]],
    ["home", ["/home", "/home/bob", "/home/alice/../bob", "/home/alicex", "/", "/etc", "home/alice"]],
    ["socket", ["/tmp/alice.sock", "/run/php/../mysqld/mysqld.sock", "/run/phpx/a.sock"]],
  ];
  for (const [kind, values] of refusals) {
    const field = poolFields.find((candidate) => candidate.kind === kind)!;
    for (const value of values) assertRefused(() => renderPool(...field.with(value)), "PHP-FPM pool", kind, value);
  }
  assert.doesNotThrow(() => renderPool({ ...pool, home: "/home/alice/sub" }, socket, poolRoots));
});

test("the pool's file and socket paths refuse a username or version that would name a file elsewhere", () => {
  for (const username of ["../../../etc/cron.d/x", "alice/../../x", "alice\n"]) {
    assertRefused(() => poolFilePath(username, "8.2"), "PHP-FPM pool", "username", username);
    assertRefused(() => poolSocketPath(username, "8.2"), "PHP-FPM pool", "username", username);
  }
  assertRefused(() => poolSocketPath("alice", "8.2/../../x"), "PHP-FPM pool", "PHP version", "8.2/../../x");
});

// Zone files -----------------------------------------------------------------------------------

const record = (name: string, type: string, content: string, extra: Partial<ZoneRecord> = {}): ZoneRecord => ({
  name,
  type,
  content,
  ttl: 3600,
  priority: null,
  weight: null,
  port: null,
  ...extra,
});

const zone: Zone = {
  domain: "alice.example",
  serial: 2026112301,
  records: [
    record("@", "A", "192.0.2.10"),
    record("@", "SOA", "ns1.panel.example. hostmaster.alice.example. 2026112301 3600 900 1209600 300"),
    record("@", "NS", "ns1.panel.example"),
    record("@", "NS", "ns2.panel.example"),
    record("www", "CNAME", "alice.example"),
    record("*", "A", "192.0.2.11", { ttl: 300 }),
    record("*.dev", "AAAA", "2001:db8::1"),
    record("@", "MX", "mail.alice.example", { priority: 10 }),
    record("_sip._tcp", "SRV", "sip.alice.example", { priority: 10, weight: 60, port: 5060 }),
    record("s1._domainkey", "TXT", `v=DKIM1; k=rsa; p=${"A".repeat(300)}`),
    record("@", "TXT", `say "hi" \\ ; ( ) $ORIGIN bücher`),
    record("empty", "TXT", ""),
  ],
};

test("normal values render the zone file byte for byte as before the checks", () => {
  assert.equal(renderZoneFile(zone), fixture("zone.zone"));
});

/** The zone with one record (the first of its type) changed. */
const withRecord = (type: string, change: Partial<ZoneRecord>): Zone => {
  const index = zone.records.findIndex((candidate) => candidate.type === type);
  return { ...zone, records: zone.records.map((candidate, at) => (at === index ? { ...candidate, ...change } : candidate)) };
};

const zoneFields: { kind: string; normal: string; with: (value: string) => Zone }[] = [
  { kind: "zone name", normal: zone.domain, with: (value) => ({ ...zone, domain: value }) },
  { kind: "record name", normal: "www", with: (value) => withRecord("CNAME", { name: value }) },
  { kind: "record type", normal: "CNAME", with: (value) => withRecord("CNAME", { type: value }) },
  { kind: "A address", normal: "192.0.2.10", with: (value) => withRecord("A", { content: value }) },
  { kind: "AAAA address", normal: "2001:db8::1", with: (value) => withRecord("AAAA", { content: value }) },
  { kind: "CNAME target", normal: "alice.example", with: (value) => withRecord("CNAME", { content: value }) },
  { kind: "NS target", normal: "ns1.panel.example", with: (value) => withRecord("NS", { content: value }) },
  { kind: "MX target", normal: "mail.alice.example", with: (value) => withRecord("MX", { content: value }) },
  { kind: "SRV target", normal: "sip.alice.example", with: (value) => withRecord("SRV", { content: value }) },
  {
    kind: "SOA",
    normal: "ns1.panel.example. hostmaster.alice.example. 2026112301 3600 900 1209600 300",
    with: (value) => withRecord("SOA", { content: value }),
  },
];

test("every field of a zone but TXT content refuses each hostile character and an injected record", () => {
  for (const field of zoneFields) {
    assert.doesNotThrow(() => renderZoneFile(field.with(field.normal)), `the normal ${field.kind} renders`);
    for (const value of [...hostileVariants(field.normal, 3), `${field.normal}\n@ IN A 203.0.113.66`]) {
      assertRefused(() => renderZoneFile(field.with(value)), "zone file", field.kind, value);
    }
  }
});

test("zone numbers and names: integers in range, names relative to the zone, known types only", () => {
  for (const value of [-1, 1.5, Number.NaN, 4294967296, "1 IN A 1.2.3.4" as unknown as number, null as unknown as number]) {
    assertRefused(() => renderZoneFile({ ...zone, serial: value }), "zone file", "serial", value);
    assertRefused(() => renderZoneFile(withRecord("A", { ttl: value })), "zone file", "TTL", value);
  }
  for (const [kind, change] of [
    ["MX priority", { priority: null }],
    ["MX priority", { priority: 65536 }],
  ] as const) {
    assertRefused(() => renderZoneFile(withRecord("MX", change)), "zone file", kind, change);
  }
  for (const field of ["priority", "weight", "port"] as const) {
    for (const value of [null, -1, 65536, 1.5]) {
      assertRefused(() => renderZoneFile(withRecord("SRV", { [field]: value })), "zone file", `SRV ${field}`, value);
    }
  }
  for (const name of ["www.alice.example.", "*x", "a.*", "-www", "www..x", "", "@@"]) {
    assertRefused(() => renderZoneFile(withRecord("CNAME", { name })), "zone file", "record name", name);
  }
  for (const type of ["PTR", "$INCLUDE", "a", ""]) assertRefused(() => renderZoneFile(withRecord("A", { type })), "zone file", "record type", type);
  for (const content of ["fe80::1%eth0", "192.0.2.1"]) assertRefused(() => renderZoneFile(withRecord("AAAA", { content })), "zone file", "AAAA address", content);
  for (const content of ["ns1.panel.example. hostmaster. 1 2 3 4", "ns1 hostmaster 1 2 3 4 99999999999", "ns1 host$master 1 2 3 4 5"]) {
    assertRefused(() => renderZoneFile(withRecord("SOA", { content })), "zone file", "SOA", content);
  }
});

test("TXT content never leaves its quoted string or its line: quotes, backslashes and control bytes are escaped", () => {
  const hostile = [
    `"\n@ IN A 203.0.113.66\n"`,
    `x"; $INCLUDE /etc/shadow ;"`,
    `\\"\r\n*\tIN\tA\t203.0.113.66`,
    `end with a backslash \\`,
    `nul\0byte`,
    `( multi\nline )`,
    `${"a".repeat(254)}"${"b".repeat(300)}\n`,
  ];
  const rendered = renderZoneFile({ ...zone, records: hostile.map((content) => record("@", "TXT", content)) });
  const lines = rendered.trimEnd().split("\n");
  assert.equal(lines.length, 3 + hostile.length, "one line per record");
  for (const line of lines.slice(3)) {
    // Only the character-strings after the type: each a quoted run of escapes and plain characters.
    assert.match(line, /^@\t3600\tIN\tTXT\t"(?:\\[0-9]{3}|\\["\\]|[\x20-\x21\x23-\x5b\x5d-\x7e])*"(?: "(?:\\[0-9]{3}|\\["\\]|[\x20-\x21\x23-\x5b\x5d-\x7e])*")*$/);
  }
  if (!fs.existsSync("/usr/bin/named-checkzone") && !fs.existsSync("/usr/sbin/named-checkzone")) return;
  // The name server's own reading: exactly these TXT records, no A slipped in, each its original bytes.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-zone-hostile-"));
  try {
    const file = path.join(dir, "alice.example.zone");
    fs.writeFileSync(file, renderZoneFile({ ...zone, records: [...zone.records.filter((row) => row.type !== "TXT"), ...hostile.map((content) => record("@", "TXT", content))] }));
    const dump = execFileSync("named-checkzone", ["-D", "-o", "-", "alice.example", file], { encoding: "utf8" });
    // Each line of the dump: owner, TTL, class, type, data.
    const types = dump.split("\n").filter(Boolean).map((line) => line.split(/\s+/)[3]);
    assert.equal(types.filter((type) => type === "TXT").length, hostile.length, "one TXT record per value");
    assert.equal(types.length, zone.records.length - 3 + hostile.length, "no record slipped in");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
