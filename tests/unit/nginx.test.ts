import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { renderSite, type Site } from "@/lib/provisioning/nginx";
import { DEFAULT_PHP_SETTINGS } from "@/lib/php-settings/schemas";
import { renderPool } from "@/lib/provisioning/php-fpm";
import { startNginx } from "../support/nginx";
import { freePort } from "../support/server";

// The server blocks and pools as rendered (pure functions), and nginx's own verdict on them
// (`nginx -t` over a configuration that includes them). tests/api/web-hosting.test.ts serves them.

const roots = { homes: "/home", phpSockets: "/run/php", certificates: "/srv/panel/certs" };
const settings = { httpPort: 8080, httpsPort: 8443, acmeChallengeDir: "/srv/panel/acme-challenge", roots };

const site = (overrides: Partial<Site>): Site => ({
  domain: "alice.example",
  username: "alice",
  serverNames: ["alice.example", "www.alice.example"],
  documentRoot: "/home/alice/public_html",
  accessLog: `/home/alice/logs/${overrides.domain ?? "alice.example"}.log`,
  errorLog: "/home/alice/logs/nginx-error.log",
  profile: "php",
  phpSocket: null,
  proxySocket: null,
  maxBodyMb: 64,
  suspended: false,
  tls: null,
  ...overrides,
});

const blocks = (text: string) => text.split(/^server \{$/m).slice(1);

test("a domain: its name and www., document root, combined access log and error log in the home's logs/, ACME challenge path, no PHP", () => {
  const [http, ...more] = blocks(renderSite(site({}), settings));
  assert.equal(more.length, 0, "one server block without a certificate");
  assert.match(http, /^\s+listen 8080;$/m);
  assert.match(http, /^\s+server_name alice\.example www\.alice\.example;$/m);
  assert.match(http, /^\s+root \/home\/alice\/public_html;$/m);
  assert.match(http, /^\s+access_log \/home\/alice\/logs\/\$server_name\.log combined;$/m, "<domain>.log, named through the server's first name");
  assert.match(http, /^\s+error_log \/home\/alice\/logs\/nginx-error\.log;$/m);
  assert.match(http, /location \^~ \/\.well-known\/acme-challenge\/ \{\s+disable_symlinks off;\s+root \/srv\/panel\/acme-challenge;/);
  assert.ok(http.includes("location ~ \\.php(/|$)|/\\.(?!well-known) {\n        disable_symlinks off;\n        return 403;"), "PHP source is never sent as text, nor dot files");
  assert.doesNotMatch(http, /fastcgi_pass/);
  assert.match(http, /^    try_files \$uri \$uri\/ =404;$/m, "no front controller without PHP");
  assert.match(http, /^\s+client_max_body_size 64m;$/m);
});

test("a subdomain with PHP: only its own name, and .php passed to the account's pool", () => {
  const text = renderSite(
    site({
      domain: "blog.alice.example",
      serverNames: ["blog.alice.example"],
      documentRoot: "/home/alice/public_html/blog.alice.example",
      phpSocket: "/run/php/alice-php8.2.sock",
    }),
    settings,
  );
  assert.match(text, /^\s+server_name blog\.alice\.example;$/m);
  assert.match(text, /fastcgi_pass unix:\/run\/php\/alice-php8\.2\.sock;/);
  assert.match(text, /fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;/);
  assert.match(text, /^\s+index index\.php index\.html index\.htm;$/m);
  assert.match(text, /^    try_files \$uri \$uri\/ \/index\.php\?\$args;$/m, "the front controller: permalinks reach index.php");
  assert.match(text, /location ~ \/\\\.\(\?!well-known\) \{\s+disable_symlinks off;\s+deny all;/, "dot files are refused");
});

test("the static profile never reaches PHP; the proxy profile passes everything but the ACME challenge to the socket in the account's run/", () => {
  const staticSite = renderSite(site({ profile: "static" }), settings);
  assert.doesNotMatch(staticSite, /fastcgi_pass|index\.php\?/);
  const proxied = renderSite(site({ profile: "proxy", proxySocket: "/home/alice/run/app.sock", maxBodyMb: 20 }), settings);
  assert.match(proxied, /location \/ \{\s+disable_symlinks off;\s+proxy_pass http:\/\/unix:\/home\/alice\/run\/app\.sock:;\s+proxy_http_version 1\.1;/);
  for (const header of ["Host $host", "X-Forwarded-For $proxy_add_x_forwarded_for", "X-Forwarded-Proto $scheme", "Upgrade $http_upgrade"]) {
    assert.ok(proxied.includes(`proxy_set_header ${header};`), header);
  }
  assert.match(proxied, /acme-challenge/);
  assert.match(proxied, /client_max_body_size 20m;/);
  assert.doesNotMatch(proxied, /try_files \$uri \$uri\//, "no file of the home is served");
  for (const socket of [
    null,
    "/home/alice/run",
    "/home/alice/run/sub/app.sock",
    "/home/alice/public_html/app.sock",
    "/home/bob/run/app.sock",
    "/run/mysqld/mysqld.sock",
    `/home/alice/run/${"a".repeat(100)}.sock`,
  ]) {
    assert.throws(() => renderSite(site({ profile: "proxy", proxySocket: socket }), settings), /proxy socket/, String(socket));
  }
  assert.throws(() => renderSite(site({ profile: "static", proxySocket: "/home/alice/run/app.sock" }), settings), /proxy socket/, "only the proxy profile has one");
});

test("every block follows a link only to a file of the link's owner, checked from the home on (the document root itself included)", () => {
  const tls = { certificatePath: "/srv/panel/certs/alice.example/fullchain.pem", keyPath: "/srv/panel/certs/alice.example/privkey.pem" };
  for (const variant of [site({}), site({ tls }), site({ suspended: true }), site({ profile: "proxy", proxySocket: "/home/alice/run/app.sock" })]) {
    const serverBlocks = blocks(renderSite(variant, settings));
    for (const block of serverBlocks) assert.match(block, /^    disable_symlinks if_not_owner from=\/home\/alice;$/m);
  }
  // Off where nginx sends no file of the home (PHP-FPM, a proxy, fixed answers, the ACME tokens): there
  // nginx 1.22's check of the root before an access-log line fails for deeper URIs (lib/provisioning/nginx.ts).
  const php = renderSite(site({ phpSocket: "/run/php/alice-php8.2.sock" }), settings);
  for (const location of ["location ^~ /.well-known/acme-challenge/ {", "location ~ [^/]\\.php(/|$) {", "location ~ /\\.(?!well-known) {"]) {
    assert.ok(php.includes(`${location}\n        disable_symlinks off;\n`), location);
  }
  assert.match(renderSite(site({ profile: "proxy", proxySocket: "/home/alice/run/app.sock" }), settings), /location \/ \{\n        disable_symlinks off;\n        proxy_pass /);
});

test("parked names are extra server names of the domain they are parked on; an addon domain has its own block", () => {
  const parkedOn = renderSite(site({ serverNames: ["alice.example", "www.alice.example", "alice-parked.example"] }), settings);
  assert.match(parkedOn, /^\s+server_name alice\.example www\.alice\.example alice-parked\.example;$/m);
  const addon = renderSite(
    site({ domain: "addon.example", serverNames: ["addon.example", "www.addon.example"], documentRoot: "/home/alice/public_html/addon.example" }),
    settings,
  );
  assert.match(addon, /^\s+root \/home\/alice\/public_html\/addon\.example;$/m);
});

test("suspended: 503 with a short page for everything but the ACME challenge", () => {
  const text = renderSite(site({ suspended: true, phpSocket: "/run/php/alice-php8.2.sock" }), settings);
  assert.match(text, /location \/ \{\s+disable_symlinks off;\s+default_type text\/html;\s+return 503 '[^']*suspended[^']*';/);
  assert.match(text, /acme-challenge/);
  assert.doesNotMatch(text, /fastcgi_pass|try_files \$uri \$uri\//, "nothing of the site is reachable");
});

test("read-only (a move's final pass): the site as served, and nginx's own 503 'moving' with a Retry-After to every method but GET and HEAD", () => {
  const served = renderSite(site({ phpSocket: "/run/php/alice-php8.2.sock" }), settings);
  const text = renderSite(site({ phpSocket: "/run/php/alice-php8.2.sock", readOnly: true }), settings);
  assert.match(text, /\n    if \(\$request_method !~ \^\(GET\|HEAD\)\$\) \{\n        return 503;\n    \}\n    error_page 503 @moving;/);
  assert.match(text, /location @moving \{\s+disable_symlinks off;\s+default_type text\/html;\s+add_header Retry-After 30 always;\s+return 503 '[^']*moving[^']*';/);
  // Everything else is the served site's, line for line: PHP still answers reads.
  const guard = text.slice(text.indexOf("    if ($request_method"), text.indexOf("    }\n", text.indexOf("location @moving")) + 6);
  assert.equal(text.replace(guard, ""), served);
});

test("with a certificate: HTTPS block on WEB_HTTPS_PORT; HTTP redirects there except the ACME challenge", () => {
  const tls = { certificatePath: "/srv/panel/certs/alice.example/fullchain.pem", keyPath: "/srv/panel/certs/alice.example/privkey.pem" };
  const [http, https] = blocks(renderSite(site({ tls, phpSocket: "/run/php/alice-php8.2.sock" }), settings));
  assert.match(http, /location \^~ \/\.well-known\/acme-challenge\//);
  assert.match(http, /location \/ \{\s+disable_symlinks off;\s+return 301 https:\/\/\$host:8443\$request_uri;/);
  assert.doesNotMatch(http, /fastcgi_pass|try_files \$uri \$uri\//);
  assert.match(https, /^\s+listen 8443 ssl;$/m);
  assert.match(https, /ssl_certificate \/srv\/panel\/certs\/alice\.example\/fullchain\.pem;/);
  assert.match(https, /ssl_certificate_key \/srv\/panel\/certs\/alice\.example\/privkey\.pem;/);
  assert.match(https, /^\s+server_name alice\.example www\.alice\.example;$/m);
  assert.match(https, /fastcgi_pass unix:\/run\/php\/alice-php8\.2\.sock;/);
  assert.match(renderSite(site({ tls }), { ...settings, httpsPort: 443 }), /return 301 https:\/\/\$host\$request_uri;/, "no :443 in the URL");
});

test("a path that would break out of its directive is refused, never written", () => {
  assert.throws(() => renderSite(site({ documentRoot: "/home/alice/x; include /etc/passwd" }), settings));
});

test("the access log is <domain>.log in the home's logs/ and the domain is the first server name ($server_name names the log)", () => {
  assert.throws(() => renderSite(site({ accessLog: "/home/alice/logs/other.example.log" }), settings), /access log/);
  assert.throws(() => renderSite(site({ accessLog: "/home/alice/alice.example.log" }), settings), /access log/);
  assert.throws(() => renderSite(site({ serverNames: ["www.alice.example", "alice.example"] }), settings), /first server name/);
});

test("the pool runs as the account's user, on demand, open_basedir limited to the home and its tmp", () => {
  const pool = renderPool(
    { username: "alice", version: "8.2", user: "alice", listenGroup: "www-data", home: "/home/alice", settings: { ...DEFAULT_PHP_SETTINGS, memory_limit_mb: 512 } },
    "/run/php/alice-php8.2.sock",
    { homes: "/home", sockets: "/run/php" },
  );
  for (const line of [
    "[alice-php8.2]",
    "user = alice",
    "group = alice",
    "listen = /run/php/alice-php8.2.sock",
    "listen.group = www-data",
    "listen.mode = 0660",
    "pm = ondemand",
    "php_admin_value[open_basedir] = /home/alice/:/home/alice/tmp/",
    "php_admin_value[upload_tmp_dir] = /home/alice/tmp",
    "php_admin_value[upload_max_filesize] = 64M",
    "php_admin_value[post_max_size] = 64M",
    "php_admin_value[memory_limit] = 512M",
    "php_admin_value[max_input_vars] = 3000",
    "php_admin_flag[display_errors] = off",
  ]) {
    assert.ok(pool.split("\n").includes(line), line);
  }
});

test("nginx -t accepts every rendered variant", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-nginx-unit-"));
  try {
    const certs = path.join(dir, "cert.pem");
    const key = path.join(dir, "key.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=alice.example", "-days", "1", "-keyout", key, "-out", certs], {
      stdio: "ignore",
    });
    const variants = [
      site({}),
      site({ domain: "blog.alice.example", serverNames: ["blog.alice.example"], phpSocket: path.join(dir, "php.sock") }),
      site({ domain: "s.example", serverNames: ["s.example"], suspended: true }),
      site({ domain: "r.example", serverNames: ["r.example"], readOnly: true, phpSocket: path.join(dir, "php.sock") }),
      site({ domain: "p.example", serverNames: ["p.example"], profile: "proxy", proxySocket: path.join(dir, "alice", "run", "app.sock") }),
      site({ domain: "st.example", serverNames: ["st.example"], profile: "static" }),
      site({ domain: "t.example", serverNames: ["t.example", "www.t.example"], tls: { certificatePath: certs, keyPath: key }, phpSocket: path.join(dir, "php.sock") }),
    ].map((variant) => ({
      ...variant,
      accessLog: path.join(dir, "alice", "logs", `${variant.domain}.log`),
      errorLog: path.join(dir, "alice", "logs", "nginx-error.log"),
      documentRoot: path.join(dir, "alice"),
    }));
    fs.mkdirSync(path.join(dir, "sites"));
    fs.mkdirSync(path.join(dir, "alice", "logs"), { recursive: true });
    const inDir = { homes: dir, phpSockets: dir, certificates: dir };
    for (const variant of variants) {
      fs.writeFileSync(path.join(dir, "sites", `${variant.domain}.conf`), renderSite(variant, { ...settings, acmeChallengeDir: dir, roots: inDir }));
    }
    fs.writeFileSync(
      path.join(dir, "nginx.conf"),
      `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n  include ${dir}/sites/*.conf;\n}\n`,
    );
    execFileSync("nginx", ["-t", "-q", "-c", path.join(dir, "nginx.conf"), "-p", dir], { stdio: "pipe" });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a read-only site served by nginx: GET and HEAD answered as before, POST and PUT get 503 'moving' with Retry-After", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-nginx-read-only-"));
  const port = await freePort();
  const home = path.join(dir, "alice");
  fs.mkdirSync(path.join(home, "logs"), { recursive: true });
  fs.mkdirSync(path.join(home, "public_html"));
  fs.writeFileSync(path.join(home, "public_html", "index.html"), "the site's own page\n");
  const readOnly = site({
    profile: "static",
    readOnly: true,
    documentRoot: path.join(home, "public_html"),
    accessLog: path.join(home, "logs", "alice.example.log"),
    errorLog: path.join(home, "logs", "nginx-error.log"),
  });
  const rendered = renderSite(readOnly, { ...settings, httpPort: port, acmeChallengeDir: dir, roots: { homes: dir, phpSockets: dir, certificates: dir } });
  const nginx = await startNginx(rendered, port);
  try {
    const ask = (method: string) => fetch(`http://127.0.0.1:${port}/`, { method, headers: { host: "alice.example" }, body: method === "GET" || method === "HEAD" ? undefined : "x" });
    const read = await ask("GET");
    assert.deepEqual([read.status, await read.text()], [200, "the site's own page\n"]);
    assert.equal((await ask("HEAD")).status, 200);
    for (const method of ["POST", "PUT", "DELETE"]) {
      const refused = await ask(method);
      assert.equal(refused.status, 503, method);
      assert.equal(refused.headers.get("retry-after"), "30", method);
      assert.match(await refused.text(), /moving to another server/, method);
    }
  } finally {
    await nginx.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
