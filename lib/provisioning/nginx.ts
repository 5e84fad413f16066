import fsSync from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { env } from "@/lib/env";
import { AppError, validationError } from "@/lib/errors";
import { checkedAbsolutePath, checkedHostName, checkedInteger, checkedLinuxName, checkedPathInside, checkedPort, refuseRenderedValue } from "./render-checks";
import { linuxUserId } from "./passwd";
import { eachLimited, readFilesIfExist, readIfExists, repairModes, runCommand, writeFilesAtomically } from "./system";

// nginx server blocks, one file per served domain: NGINX_SITES_DIR/<domain>.conf, included by
// the admin's nginx.conf. renderSite is pure; applySites writes a batch of files, runs
// NGINX_TEST_COMMAND, puts every previous file back when the test fails (422: nothing changed),
// then runs NGINX_RELOAD_COMMAND once.

export interface TlsCertificate {
  certificatePath: string;
  keyPath: string;
}

export interface Site {
  /** The domain the file is named after (never a parked domain: those are extra names). */
  domain: string;
  /** The account's username: the document root lies in HOME_ROOT/<username>, the logs in its logs/. */
  username: string;
  /** server_name: the domain, `www.` for type `domain`, the names parked on it. */
  serverNames: string[];
  documentRoot: string;
  /** The domain's access log `<domain>.log` (combined format) and the account's nginx error log, in HOME_ROOT/<username>/logs/. */
  accessLog: string;
  errorLog: string;
  /** How requests are answered: PHP with a front controller (static files when phpSocket is null), static files only, or a proxy. */
  profile: "php" | "static" | "proxy";
  /** The account's PHP-FPM pool socket for the domain's version; null when PHP is off or the profile is not `php`. */
  phpSocket: string | null;
  /** The `proxy` profile's unix socket, HOME_ROOT/<username>/run/<name>; null for the other profiles. */
  proxySocket: string | null;
  /** client_max_body_size, in MB: the account's post_max_size. */
  maxBodyMb: number;
  suspended: boolean;
  /** GET and HEAD answered as ever, every other method 503 "moving" (a move's final pass); absent: false. */
  readOnly?: boolean;
  tls: TlsCertificate | null;
}

/** The directories a site's paths must lie in (HOME_ROOT, PHP_FPM_SOCKET_DIR, CERTS_DIR). */
export interface SiteRoots {
  homes: string;
  phpSockets: string;
  certificates: string;
}

export interface SiteSettings {
  httpPort: number;
  httpsPort: number;
  acmeChallengeDir: string;
  roots: SiteRoots;
}

const RENDERER = "nginx server block";

/** The longest path a unix socket can have (sun_path's 108 bytes, its final NUL included): nginx refuses longer ones. */
export const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Every value of the site, checked again here (render-checks.ts): stored values are rendered
 * later (jobs, start), and a server block is read by a root process. Returns the site and its home.
 */
function checkedSite(site: Site, settings: SiteSettings): { site: Site; home: string } {
  const { roots } = settings;
  const username = checkedLinuxName(RENDERER, "username", site.username);
  checkedHostName(RENDERER, "domain", site.domain);
  if (!Array.isArray(site.serverNames) || site.serverNames.length === 0) {
    refuseRenderedValue(RENDERER, "server names", site.serverNames, "there must be at least one");
  }
  for (const name of site.serverNames) checkedHostName(RENDERER, "server name", name);
  // $server_name names the access log (renderSite): the first name must be the domain.
  if (site.serverNames[0] !== site.domain) refuseRenderedValue(RENDERER, "first server name", site.serverNames[0], "it must be the domain");
  const home = path.posix.join(checkedAbsolutePath(RENDERER, "home root", roots.homes), username);
  checkedPathInside(RENDERER, "document root", site.documentRoot, home);
  const logs = path.posix.join(home, "logs");
  if (site.documentRoot === logs || site.documentRoot.startsWith(`${logs}/`)) refuseRenderedValue(RENDERER, "document root", site.documentRoot, "the home's logs/ is never served");
  if (site.accessLog !== path.posix.join(logs, `${site.domain}.log`)) refuseRenderedValue(RENDERER, "access log", site.accessLog, `it must be ${logs}/<domain>.log`);
  checkedPathInside(RENDERER, "error log", site.errorLog, logs);
  if (site.phpSocket !== null) checkedPathInside(RENDERER, "PHP-FPM socket", site.phpSocket, roots.phpSockets);
  if (!["php", "static", "proxy"].includes(site.profile)) refuseRenderedValue(RENDERER, "site profile", site.profile, "php, static or proxy");
  if (site.profile === "proxy") {
    // A file directly in the home's run/ (root's, sticky: homes.ts), never another directory.
    const run = path.posix.join(home, "run");
    checkedPathInside(RENDERER, "proxy socket", site.proxySocket, run);
    if (path.posix.dirname(site.proxySocket!) !== run) refuseRenderedValue(RENDERER, "proxy socket", site.proxySocket, `it must be a file in ${run}`);
    if (Buffer.byteLength(site.proxySocket!) > MAX_SOCKET_PATH_BYTES) refuseRenderedValue(RENDERER, "proxy socket", site.proxySocket, `a unix socket's path holds at most ${MAX_SOCKET_PATH_BYTES} bytes`);
  } else if (site.proxySocket !== null) {
    refuseRenderedValue(RENDERER, "proxy socket", site.proxySocket, "only the proxy profile has one");
  }
  checkedInteger(RENDERER, "maximum body size", site.maxBodyMb, 1, 1_000_000);
  for (const [field, value] of [["suspended", site.suspended], ["read-only", site.readOnly === undefined ? false : site.readOnly]] as const) {
    if (typeof value !== "boolean") refuseRenderedValue(RENDERER, field, value, "true or false");
  }
  if (site.tls !== null) {
    checkedPathInside(RENDERER, "certificate", site.tls.certificatePath, roots.certificates);
    checkedPathInside(RENDERER, "certificate key", site.tls.keyPath, roots.certificates);
  }
  checkedPort(RENDERER, "HTTP port", settings.httpPort);
  checkedPort(RENDERER, "HTTPS port", settings.httpsPort);
  checkedAbsolutePath(RENDERER, "ACME challenge directory", settings.acmeChallengeDir);
  return { site, home };
}

// The FastCGI parameters inline (not `include fastcgi_params`): the file works with any
// nginx prefix, and what PHP receives is visible here.
const FASTCGI_PARAMS = [
  "SCRIPT_FILENAME $document_root$fastcgi_script_name",
  "SCRIPT_NAME $fastcgi_script_name",
  "QUERY_STRING $query_string",
  "REQUEST_METHOD $request_method",
  "CONTENT_TYPE $content_type",
  "CONTENT_LENGTH $content_length",
  "REQUEST_URI $request_uri",
  "DOCUMENT_URI $document_uri",
  "DOCUMENT_ROOT $document_root",
  "SERVER_PROTOCOL $server_protocol",
  "REQUEST_SCHEME $scheme",
  "HTTPS $https if_not_empty",
  "GATEWAY_INTERFACE CGI/1.1",
  "SERVER_SOFTWARE nginx",
  "REMOTE_ADDR $remote_addr",
  "REMOTE_PORT $remote_port",
  "SERVER_ADDR $server_addr",
  "SERVER_PORT $server_port",
  "SERVER_NAME $server_name",
  "REDIRECT_STATUS 200",
];

const SUSPENDED_PAGE =
  "<!doctype html><html><head><title>Site suspended</title></head><body><h1>This site is suspended</h1></body></html>";

const MOVING_PAGE =
  "<!doctype html><html><head><title>Site moving</title></head><body><h1>This site is moving to another server</h1><p>Please try again in a minute.</p></body></html>";

// The proxy profile's request to the application, and a moved site's forward to its new node
// (./forwards.ts): the visitor's host, address and scheme, and WebSocket upgrades passed through
// (HTTP/1.1, the client's Upgrade and Connection headers).
export const PROXY_HEADERS = [
  "Host $host",
  "X-Real-IP $remote_addr",
  "X-Forwarded-For $proxy_add_x_forwarded_for",
  "X-Forwarded-Proto $scheme",
  "Upgrade $http_upgrade",
  "Connection $http_connection",
];

// disable_symlinks (renderSite) guards the files nginx itself sends from the home. A location that
// sends none turns it off: PHP-FPM opens its scripts as the account, inside open_basedir (a link
// to another account's file is that account's permissions away); a proxy, a fixed answer and the
// panel's own ACME tokens hold no file of a customer. And there it would cost log lines: with it
// on, nginx 1.22's check that the request's root exists before it writes a log whose path holds a
// variable walks the URI's folders as though they were the root's, fails for a URI of two or more
// segments, and drops the line (found here: WordPress's /wp-admin/*.php went unlogged). So only
// nginx's own 403 and 404 answers to such URIs, at the server's level, go unlogged.
const NO_LINK_CHECK = "        disable_symlinks off;";

// A read-only site (a move's final pass): what could write — any method but GET and HEAD — gets
// nginx's own 503 with the "moving" page and a Retry-After; reads go on as before. An `if` that
// only returns is safe at the server's level; error_page takes only nginx's own 503s (an
// application's 503 passes as it is).
const READ_ONLY_LINES = [
  "    if ($request_method !~ ^(GET|HEAD)$) {",
  "        return 503;",
  "    }",
  "    error_page 503 @moving;",
  "    location @moving {",
  NO_LINK_CHECK,
  "        default_type text/html;",
  "        add_header Retry-After 30 always;",
  `        return 503 '${MOVING_PAGE}';`,
  "    }",
];

function contentLocations(site: Site): string[] {
  const served = servedLocations(site);
  return site.readOnly ? [...READ_ONLY_LINES, ...served] : served;
}

function servedLocations(site: Site): string[] {
  if (site.suspended) {
    return [
      "    location / {",
      NO_LINK_CHECK,
      "        default_type text/html;",
      `        return 503 '${SUSPENDED_PAGE}';`,
      "    }",
    ];
  }
  if (site.profile === "proxy") {
    return [
      "    location / {",
      NO_LINK_CHECK,
      // The socket the account's application made in its own run/ (the trailing `:` ends the path).
      `        proxy_pass http://unix:${site.proxySocket}:;`,
      "        proxy_http_version 1.1;",
      ...PROXY_HEADERS.map((header) => `        proxy_set_header ${header};`),
      "        proxy_read_timeout 300s;",
      "    }",
    ];
  }
  // Dot files (.git/, .env, .htpasswd) are never served, except /.well-known/.
  const refused = site.phpSocket
    ? [
        "    location ~ [^/]\\.php(/|$) {",
        NO_LINK_CHECK,
        "        fastcgi_split_path_info ^(.+?\\.php)(/.*)$;",
        "        try_files $fastcgi_script_name =404;",
        ...FASTCGI_PARAMS.map((param) => `        fastcgi_param ${param};`),
        "        fastcgi_param PATH_INFO $fastcgi_path_info;",
        `        fastcgi_pass unix:${site.phpSocket};`,
        "    }",
        "    location ~ /\\.(?!well-known) {",
        NO_LINK_CHECK,
        "        deny all;",
        "    }",
      ]
    : // Without PHP a .php file is refused too, never sent as text (its source holds passwords).
      ["    location ~ \\.php(/|$)|/\\.(?!well-known) {", NO_LINK_CHECK, "        return 403;", "    }"];
  return [
    `    index ${site.phpSocket ? "index.php " : ""}index.html index.htm;`,
    // For every request no location below takes. PHP: what is not a file or a directory goes to
    // the front controller (WordPress permalinks, Laravel, Symfony, Drupal routes). At the
    // server's level rather than in a `location /`: every location costs nginx memory and time
    // at each configuration test (10,000 sites: 75 MB and about a tenth of the test,
    // docs/performance.md "Figures").
    `    try_files $uri $uri/ ${site.phpSocket ? "/index.php?$args" : "=404"};`,
    ...refused,
  ];
}

/**
 * The first line of every server block the panel writes: its mark (./marks.ts). A file of that
 * name without it is not the panel's: never written over nor removed.
 */
export const siteHeader = (domain: string) => `# ${domain}: written by the hosting panel; edit through the panel.`;

/**
 * The first line of a moved account's forward (./forwards.ts): the panel's mark too, with when the
 * forward ends — a reconcile of this machine keeps it until then (forwardEnd).
 */
export const forwardHeader = (domain: string, until: Date) => `# ${domain}: forwarded by the hosting panel until ${until.toISOString()}; edit through the panel.`;

/** When the forward in `contents` ends; null when it is not a forward the panel wrote for `domain`. */
export function forwardEnd(domain: string, contents: string): Date | null {
  const prefix = `# ${domain}: forwarded by the hosting panel until `;
  if (!contents.startsWith(prefix)) return null;
  const line = contents.slice(0, contents.indexOf("\n"));
  const until = new Date(line.slice(prefix.length, line.indexOf(";")));
  return line === forwardHeader(domain, until) ? until : null;
}

const isPanelSiteFile = (domain: string, contents: string) => contents.startsWith(`${siteHeader(domain)}\n`) || forwardEnd(domain, contents) !== null;

/** The domains among `domains` whose file is a forward the panel wrote. */
export async function forwardDomains(domains: string[]): Promise<string[]> {
  const onDisk = await readFilesIfExist(domains.map(siteFilePath));
  return domains.filter((domain) => forwardEnd(domain, onDisk.get(siteFilePath(domain)) ?? "") !== null);
}

/** Of the files written for `domains`, those of forwards that have not ended yet (a reconcile keeps them). */
export async function liveForwardDomains(domains: string[], now = new Date()): Promise<Set<string>> {
  const onDisk = await readFilesIfExist(domains.map(siteFilePath));
  return new Set(domains.filter((domain) => (forwardEnd(domain, onDisk.get(siteFilePath(domain)) ?? "")?.getTime() ?? 0) > now.getTime()));
}

/** The server block(s) of one domain: HTTP, and with a certificate HTTPS plus a redirect. */
export function renderSite(unchecked: Site, settings: SiteSettings): string {
  const { site, home } = checkedSite(unchecked, settings);
  const names = site.serverNames.join(" ");
  const acme = [
    "    location ^~ /.well-known/acme-challenge/ {",
    NO_LINK_CHECK,
    `        root ${settings.acmeChallengeDir};`,
    "        default_type text/plain;",
    "        try_files $uri =404;",
    "    }",
  ];
  const common = [
    `    server_name ${names};`,
    // The access log named through $server_name (the domain): a path with a variable is opened
    // by the worker when it writes, not by nginx as it loads the configuration, where every
    // fixed log path is searched for in the list of the files it has opened so far (10,000 sites:
    // 40 % of `nginx -t`, docs/performance.md "Figures"). So the workers (WEB_SERVER_USER) own the
    // file, made by the panel (makeAccessLogs), and the log is written only where the request's
    // root exists: every block has its root, also those that serve no file (suspended, proxy, the
    // redirect).
    `    root ${site.documentRoot};`,
    `    access_log ${path.posix.dirname(site.accessLog)}/$server_name.log combined;`,
    `    error_log ${site.errorLog};`,
    `    client_max_body_size ${site.maxBodyMb}m;`,
    // nginx's workers are in every account's group: a link the customer made (to another
    // account's wp-config.php, logs or keys file) is followed only when the link and what it
    // points at have one owner. Checked from the home on, not from $document_root: the document
    // root itself is the customer's to swap for a link; the home is root's (docs/security.md
    // "nginx never crosses accounts").
    // Off in the locations that send no file of the home (NO_LINK_CHECK).
    `    disable_symlinks if_not_owner from=${home};`,
  ];
  const lines = [siteHeader(site.domain), "server {"];
  lines.push(`    listen ${settings.httpPort};`, ...common, ...acme);
  if (site.tls) {
    lines.push("    location / {", NO_LINK_CHECK, `        return 301 https://$host${settings.httpsPort === 443 ? "" : `:${settings.httpsPort}`}$request_uri;`, "    }");
    lines.push("}", "server {");
    lines.push(`    listen ${settings.httpsPort} ssl;`, ...common);
    lines.push(`    ssl_certificate ${site.tls.certificatePath};`, `    ssl_certificate_key ${site.tls.keyPath};`);
    lines.push(...acme);
  }
  lines.push(...contentLocations(site), "}");
  return `${lines.join("\n")}\n`;
}

export function siteSettings(): SiteSettings {
  const config = env();
  return {
    httpPort: config.webHttpPort,
    httpsPort: config.webHttpsPort,
    acmeChallengeDir: config.acmeChallengeDir,
    roots: { homes: config.homeRoot, phpSockets: config.phpFpmSocketDir, certificates: config.certsDir },
  };
}

export function siteFilePath(domain: string): string {
  if (!/^[a-z0-9.-]+$/.test(domain)) throw new Error(`not a domain name: ${domain}`);
  return path.join(env().nginxSitesDir, `${domain}.conf`);
}

/** A file to write (`contents`) or remove (null) in NGINX_SITES_DIR. */
export interface SiteChange {
  domain: string;
  contents: string | null;
}

/**
 * Applies the changes that differ from what is on disk, tests nginx's whole configuration and
 * reloads it once. A failed test (or write) puts back every previous file and throws 422
 * naming nginx's complaint. Returns how many files changed. `accessLogs` are the access logs of
 * the sites written (makeAccessLogs). `onTestStart` is called as the test starts (start-up
 * writes the zone files then: the test runs in a process of its own).
 */
export function applySites(changes: SiteChange[], accessLogs: string[] = [], onTestStart: () => void = () => {}, foreignFiles: "refuse" | "skip" = "refuse"): Promise<number> {
  // One batch at a time: another batch's half-written files must not fail this one's test.
  const run = queue.then(() => applyBatch(changes, accessLogs, onTestStart, foreignFiles));
  queue = run.catch(() => undefined);
  return run;
}

let queue: Promise<unknown> = Promise.resolve();

const PARALLEL_FILES = 64;

async function applyBatch(all: SiteChange[], accessLogs: string[], onTestStart: () => void, foreignFiles: "refuse" | "skip"): Promise<number> {
  const config = env();
  const logsOwner = accessLogs.length > 0 ? await webServerUserId() : null;
  const onDisk = await readFilesIfExist(all.map((change) => siteFilePath(change.domain)));
  // A file of the domain's name the panel did not write (no header: an admin's own) is left as it
  // is: a write of it is refused before anything changes (skipped, logged, at start and in a
  // reconcile), a removal skipped.
  const changes: SiteChange[] = [];
  for (const change of all) {
    const before = onDisk.get(siteFilePath(change.domain)) ?? null;
    if (before === null || isPanelSiteFile(change.domain, before)) changes.push(change);
    else if (change.contents !== null && foreignFiles === "refuse") throw foreignSiteError(change.domain);
    else console.error(`[web] ${siteFilePath(change.domain)} was not written by the panel: left as it is`);
  }
  const previous = new Map<string, string | null>();
  for (const change of changes) {
    const file = siteFilePath(change.domain);
    const before = onDisk.get(file) ?? null;
    if (before !== change.contents) previous.set(file, before);
  }
  // Written 0600 (nginx's master reads them as root); one an older version left 0644 is closed
  // even when its site did not change.
  repairModes(
    changes.filter((change) => change.contents !== null && !previous.has(siteFilePath(change.domain))).map((change) => siteFilePath(change.domain)),
    0o600,
  );
  // nginx opens the error logs as it loads the configuration, its workers the access logs when
  // they write (renderSite): the logs/ directories (root's, made with the home; one lost with its
  // home is made again) must be there for the test, the access logs for the reload.
  for (const dir of new Set(accessLogs.map((file) => path.dirname(file)))) fsSync.mkdirSync(dir, { recursive: true });
  if (previous.size === 0) {
    if (logsOwner !== null) makeAccessLogs(accessLogs, logsOwner);
    return 0;
  }
  try {
    const changed = changes.filter((change) => previous.has(siteFilePath(change.domain)));
    await replaceFiles(changed.map((change) => [siteFilePath(change.domain), change.contents]));
    onTestStart();
    const testing = runCommand(config.nginxTestCommand);
    // The access logs are made while nginx tests (in a process of its own).
    let logsFailure: unknown = null;
    try {
      if (logsOwner !== null) makeAccessLogs(accessLogs, logsOwner);
    } catch (error) {
      logsFailure = error;
    }
    const failure = await testing;
    if (failure) {
      // nginx -t names files and lines of the whole server, other accounts' among them: its words
      // go to the panel's log, the answer says what happened.
      console.error(`[web] nginx refused the new configuration: ${failure}`);
      throw new AppError("VALIDATION", "The web server refused the new configuration; nothing was changed");
    }
    if (logsFailure) throw logsFailure;
  } catch (error) {
    await replaceFiles([...previous]);
    throw error;
  }
  await reloadNginx();
  return previous.size;
}

/** The domains among `domains` whose server block's file exists and is not the panel's. */
export async function foreignSiteFiles(domains: string[]): Promise<string[]> {
  const onDisk = await readFilesIfExist(domains.map(siteFilePath));
  return domains.filter((domain) => {
    const contents = onDisk.get(siteFilePath(domain)) ?? null;
    return contents !== null && !isPanelSiteFile(domain, contents);
  });
}

/** 422 at `domain`: its server block's file exists and is not the panel's. */
export function foreignSiteError(domain: string) {
  console.error(`[web] ${siteFilePath(domain)} was not written by the panel: refused`);
  return validationError("domain", `${domain} has a web server file on this server that the panel did not write; the panel leaves it alone`);
}

async function webServerUserId(): Promise<number> {
  const user = env().webServerUser;
  const uid = await linuxUserId(user);
  if (uid === null) throw new AppError("VALIDATION", `The web server's user ${user} does not exist on this server`);
  return uid;
}

const ACCESS_LOG_MODE = 0o640;

/**
 * Makes each access log that is missing, and gives each to the web server's user `uid`
 * (WEB_SERVER_USER), group that of its directory (logs/: the account's), 0640: nginx's workers
 * open it by path to write (renderSite) and cannot create it in logs/, which is root's; the
 * account reads it and cannot change it. Synchronously, as writeFilesAtomically makes its files
 * (10,000 logs at a first start).
 */
function makeAccessLogs(files: string[], uid: number): void {
  const groupOfDirectory = new Map<string, number>();
  const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW } = fsSync.constants;
  for (const file of files) {
    const dir = path.dirname(file);
    let gid = groupOfDirectory.get(dir);
    if (gid === undefined) {
      gid = fsSync.statSync(dir).gid;
      groupOfDirectory.set(dir, gid);
    }
    // Never through a link (none can be planted in root's logs/), never truncated.
    const fd = fsSync.openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW, ACCESS_LOG_MODE);
    try {
      const stat = fsSync.fstatSync(fd);
      if (stat.uid !== uid || stat.gid !== gid) fsSync.fchownSync(fd, uid, gid);
      if ((stat.mode & 0o777) !== ACCESS_LOG_MODE) fsSync.fchmodSync(fd, ACCESS_LOG_MODE);
    } finally {
      fsSync.closeSync(fd);
    }
  }
}

/** Gives each file its contents, or removes it (null); the writes in one batch (writeFilesAtomically). */
async function replaceFiles(files: [path: string, contents: string | null][]): Promise<void> {
  await eachLimited(files, PARALLEL_FILES, async ([file, contents]) => {
    if (contents === null) await fs.rm(file, { force: true });
  });
  await writeFilesAtomically(files.flatMap(([file, contents]) => (contents === null ? [] : [{ path: file, contents }])));
}

const RELOAD_WAIT_MS = 10_000;

/** The worker processes of nginx's master (Linux: /proc/<pid>/task/<pid>/children). */
async function childrenOf(pid: number): Promise<number[]> {
  const text = await fs.readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
  return text.split(/\s+/).filter(Boolean).map(Number);
}

/** An old worker still accepting connections: alive, and not yet "nginx: worker process is shutting down". */
async function stillAccepting(pid: number): Promise<boolean> {
  const title = await fs.readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => null);
  return title !== null && !title.includes("shutting down");
}

/**
 * NGINX_RELOAD_COMMAND, then the wait that makes a change live when the API answers: nginx
 * reloads asynchronously (the master starts workers with the new configuration, then tells the
 * old ones to stop accepting), so the panel waits until a worker the master did not have before
 * runs and every old one has stopped accepting. Without the master's pid (NGINX_PID_FILE) there
 * is nothing to watch; a wait longer than 10 s is logged, never fatal: the configuration is
 * valid and applied.
 */
export async function reloadNginx(): Promise<void> {
  const config = env();
  const master = Number((await readIfExists(config.nginxPidFile))?.trim());
  const before = Number.isInteger(master) && master > 0 ? await childrenOf(master) : [];
  const reloadError = await runCommand(config.nginxReloadCommand);
  if (reloadError) return console.error(`[web] sites written, but the reload failed: ${reloadError}`);
  if (before.length === 0) return;
  const deadline = Date.now() + RELOAD_WAIT_MS;
  while (Date.now() < deadline) {
    const now = await childrenOf(master);
    const started = now.some((pid) => !before.includes(pid));
    const accepting = await Promise.all(before.map(stillAccepting));
    if (started && !accepting.some(Boolean)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  console.error(`[web] nginx did not serve its new configuration within ${RELOAD_WAIT_MS / 1000} s of the reload`);
}

const PROTECTED_SYMLINKS = "/proc/sys/fs/protected_symlinks";

/**
 * The kernel's fs.protected_symlinks on: in a sticky world-writable directory a link is then
 * followed only by its owner, or when the directory's owner made it. nginx's workers connect to a
 * proxied site's socket by path, and connect() follows links: this is what refuses them a link a
 * customer put in their root-owned sticky run/ (homes.ts makeRunDirectory) to another account's
 * application or a service of the server. On by default where systemd runs (Debian); at start the
 * panel turns it on where it is off, and a server where that cannot be done is not started.
 */
export async function ensureLinkProtection(): Promise<void> {
  const value = (await readIfExists(PROTECTED_SYMLINKS))?.trim();
  if (value === undefined) throw new Error(`${PROTECTED_SYMLINKS} is missing: the panel's proxied sites need the kernel's protection of links (Linux)`);
  if (value !== "0") return;
  try {
    await fs.writeFile(PROTECTED_SYMLINKS, "1\n");
  } catch (error) {
    throw new Error(`fs.protected_symlinks is 0 and could not be turned on (${(error as NodeJS.ErrnoException).code}): set it to 1 on this server (sysctl fs.protected_symlinks=1), nginx's workers would follow a customer's links to any socket`);
  }
  console.log("[web] fs.protected_symlinks turned on (nginx's workers must not follow a customer's link to a socket); make it lasting in /etc/sysctl.d");
}

/** The domains that have a file in NGINX_SITES_DIR (start-up removes those no longer hosted). */
export async function writtenSiteDomains(): Promise<string[]> {
  const names = await fs.readdir(env().nginxSitesDir).catch(() => [] as string[]);
  return names.filter((name) => name.endsWith(".conf")).map((name) => name.slice(0, -".conf".length));
}
