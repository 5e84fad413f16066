import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { type Forward, renderForward } from "@/lib/provisioning/forwards";
import { forwardEnd, forwardHeader } from "@/lib/provisioning/nginx";

// A moved account's forward on its old node, as rendered (lib/provisioning/forwards.ts), and
// nginx's own verdict on it. tests/api/move-forward.test.ts serves it between two nodes.

const roots = { homes: "/home", phpSockets: "/run/php", certificates: "/srv/panel/certs" };
const settings = { httpPort: 80, httpsPort: 443, acmeChallengeDir: "/srv/panel/acme-challenge", roots };
const until = new Date("2026-11-28T12:00:00.000Z");

const forward = (overrides: Partial<Forward> = {}): Forward => ({
  domain: "alice.example",
  serverNames: ["alice.example", "www.alice.example"],
  target: "192.0.2.3",
  until,
  tls: null,
  trustedCertificates: null,
  ...overrides,
});

test("a forward: every name of the site to the target's HTTP port, with the visitor's Host, address and scheme; no file of the home, the panel's mark with its end, a Via in the answer", () => {
  const text = renderForward(forward(), settings);
  assert.equal(text.split("\n")[0], forwardHeader("alice.example", until));
  assert.equal(forwardEnd("alice.example", text)?.toISOString(), until.toISOString());
  assert.equal(forwardEnd("bob.example", text), null);
  assert.match(text, /^ {4}listen 80;$/m);
  assert.match(text, /^ {4}server_name alice\.example www\.alice\.example;$/m);
  assert.match(text, /^ {8}proxy_pass http:\/\/192\.0\.2\.3;$/m);
  for (const header of ["Host $host", "X-Forwarded-For $proxy_add_x_forwarded_for", "X-Forwarded-Proto $scheme", "X-Real-IP $remote_addr"]) {
    assert.ok(text.includes(`proxy_set_header ${header};`), header);
  }
  assert.doesNotMatch(text, /root |\/home|ssl/);
  assert.match(text, /access_log off;/);
  // The visitor's answer says it came through the forward.
  assert.match(text, /^ {8}add_header Via "1\.1 hosting-panel-forward";$/m);
});

test("with a certificate here: HTTPS answered with it, forwarded over TLS with SNI of the visitor's host and a verified certificate, else to the HTTP port", () => {
  const tls = { certificatePath: "/srv/panel/certs/alice.example/fullchain.pem", keyPath: "/srv/panel/certs/alice.example/privkey.pem" };
  const text = renderForward(forward({ tls, trustedCertificates: "/etc/ssl/certs/ca-certificates.crt" }), settings);
  const https = text.split(/^server \{$/m)[2];
  assert.match(https, /listen 443 ssl;/);
  assert.match(https, /ssl_certificate \/srv\/panel\/certs\/alice\.example\/fullchain\.pem;/);
  assert.match(https, /proxy_pass https:\/\/192\.0\.2\.3;/);
  assert.match(https, /proxy_ssl_server_name on;/);
  assert.match(https, /proxy_ssl_name \$host;/);
  assert.match(https, /proxy_ssl_verify on;/);
  assert.match(https, /error_page 502 = @plain;/);
  assert.match(https, /location @plain \{\n {8}proxy_pass http:\/\/192\.0\.2\.3;/);
  // Without a CA bundle to verify with: straight to the HTTP port.
  const unverified = renderForward(forward({ tls }), settings).split(/^server \{$/m)[2];
  assert.match(unverified, /proxy_pass http:\/\/192\.0\.2\.3;/);
  assert.doesNotMatch(unverified, /proxy_ssl/);
});

test("a forward refuses what is not a host name, an IPv4 target, or a certificate under CERTS_DIR", () => {
  assert.throws(() => renderForward(forward({ target: "192.0.2.3; include /etc/passwd" }), settings));
  assert.throws(() => renderForward(forward({ target: "n2.example" }), settings));
  assert.throws(() => renderForward(forward({ serverNames: ["alice.example", "evil.example;"] }), settings));
  assert.throws(() => renderForward(forward({ serverNames: ["www.alice.example"] }), settings));
  assert.throws(() => renderForward(forward({ tls: { certificatePath: "/etc/shadow", keyPath: "/srv/panel/certs/k.pem" } }), settings));
});

test("nginx -t accepts a forward, with and without HTTPS", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-nginx-forward-"));
  try {
    const certificatePath = path.join(dir, "cert.pem");
    const keyPath = path.join(dir, "key.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=alice.example", "-days", "1", "-keyout", keyPath, "-out", certificatePath], { stdio: "ignore" });
    const inDir = { ...settings, httpPort: 8080, httpsPort: 8443, roots: { ...roots, certificates: dir } };
    fs.mkdirSync(path.join(dir, "sites"));
    fs.writeFileSync(path.join(dir, "sites", "a.example.conf"), renderForward(forward({ domain: "a.example", serverNames: ["a.example"] }), inDir));
    fs.writeFileSync(
      path.join(dir, "sites", "b.example.conf"),
      renderForward(forward({ domain: "b.example", serverNames: ["b.example", "www.b.example"], tls: { certificatePath, keyPath }, trustedCertificates: certificatePath }), inDir),
    );
    fs.writeFileSync(path.join(dir, "nginx.conf"), `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n  include ${dir}/sites/*.conf;\n}\n`);
    execFileSync("nginx", ["-t", "-q", "-c", path.join(dir, "nginx.conf"), "-p", dir], { stdio: "pipe" });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
