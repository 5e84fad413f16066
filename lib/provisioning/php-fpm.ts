import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { env } from "@/lib/env";
import { validationError } from "@/lib/errors";
import { fastcgiGet } from "./fastcgi";
import { MSMTP_BINARY, PHP_MAIL_CONFIG, PHP_SETTING_MAXIMA, type PhpSettings } from "./rules";
import { checkedAbsolutePath, checkedInteger, checkedLinuxName, checkedPathInside, refuseRenderedValue } from "./render-checks";
import { makeDirectories, readIfExists, runCommand, writeAtomically } from "./system";

// PHP-FPM pools, one per account and PHP version: PHP_FPM_POOL_DIR (with {version}) holds
// `panel-<username>.conf` (the prefix tells the panel's pools from the distribution's www.conf),
// listening on PHP_FPM_SOCKET_DIR/<username>-php<version>.sock, running as the account's user
// with open_basedir limited to its home and private tmp, processes started on demand. Each pool
// answers PHP-FPM's own ping page with its file's revision (a hash of the rest of the file), so
// the panel knows when the pool it wrote is the one serving (waitForPools).

export interface Pool {
  username: string;
  version: string;
  /** The Linux user the pool's processes run as. */
  user: string;
  /** The web server's group: it alone may connect to the socket. */
  listenGroup: string;
  home: string;
  settings: PhpSettings;
}

/** The directories a pool's paths must lie in: HOME_ROOT (its home is HOME_ROOT/<username>), PHP_FPM_SOCKET_DIR. */
export interface PoolRoots {
  homes: string;
  sockets: string;
}

const RENDERER = "PHP-FPM pool";
const VERSION = /^[0-9]{1,3}\.[0-9]{1,3}$/;

function checkedVersion(version: string): string {
  if (typeof version !== "string" || !VERSION.test(version)) refuseRenderedValue(RENDERER, "PHP version", version, "a version is <major>.<minor>");
  return version;
}

const withVersion = (template: string, version: string) => template.replaceAll("{version}", checkedVersion(version));

// The username names files here too: a name with `/` or `..` would write or remove a file elsewhere.
export function poolSocketPath(username: string, version: string): string {
  const name = `${checkedLinuxName(RENDERER, "username", username)}-php${checkedVersion(version)}.sock`;
  return path.join(env().phpFpmSocketDir, name);
}

export function poolFilePath(username: string, version: string): string {
  const name = `panel-${checkedLinuxName(RENDERER, "username", username)}.conf`;
  return path.join(withVersion(env().phpFpmPoolDir, version), name);
}

export const poolRoots = (): PoolRoots => ({ homes: env().homeRoot, sockets: env().phpFpmSocketDir });

/** A PHP version is installed when its PHP-FPM binary exists (PHP_FPM_BINARY). */
export async function isPhpInstalled(version: string): Promise<boolean> {
  return fs.access(withVersion(env().phpFpmBinary, version), fs.constants.X_OK).then(
    () => true,
    () => false,
  );
}

/**
 * The PHP versions whose PHP-FPM binary this server has: PHP_FPM_BINARY's directory listed,
 * the names matching its template ("/usr/sbin/php-fpm{version}" finds php-fpm8.2).
 */
export async function installedPhpVersions(): Promise<string[]> {
  const template = env().phpFpmBinary;
  const dir = path.dirname(template);
  const [before, after = ""] = path.basename(template).split("{version}");
  if (dir.includes("{version}") || !path.basename(template).includes("{version}")) return [];
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const versions = names
    .filter((name) => name.startsWith(before) && name.endsWith(after))
    .map((name) => name.slice(before.length, name.length - after.length))
    .filter((version) => VERSION.test(version));
  const installed = await Promise.all(versions.map(async (version) => ((await isPhpInstalled(version)) ? version : null)));
  return installed.filter((version): version is string => version !== null).sort();
}

export async function assertPhpInstalled(version: string): Promise<void> {
  if (!(await isPhpInstalled(version))) {
    throw validationError("php_version_id", `names PHP ${version}, which is not installed on this server`);
  }
}

/**
 * Every value checked again here (render-checks.ts): the pool's file is read by PHP-FPM as root,
 * and its user, group and open_basedir decide what the account's PHP may touch.
 */
function checkedPool(pool: Pool, socket: string, roots: PoolRoots): Pool {
  const username = checkedLinuxName(RENDERER, "username", pool.username);
  checkedVersion(pool.version);
  checkedLinuxName(RENDERER, "user", pool.user);
  checkedLinuxName(RENDERER, "listen group", pool.listenGroup);
  checkedPathInside(RENDERER, "home", pool.home, path.posix.join(checkedAbsolutePath(RENDERER, "home root", roots.homes), username));
  checkedPathInside(RENDERER, "socket", socket, roots.sockets);
  for (const [name, maximum] of Object.entries(PHP_SETTING_MAXIMA)) {
    checkedInteger(RENDERER, name, pool.settings[name as keyof typeof PHP_SETTING_MAXIMA], 1, maximum);
  }
  if (typeof pool.settings.display_errors !== "boolean") refuseRenderedValue(RENDERER, "display_errors", pool.settings.display_errors, "on or off");
  return pool;
}

/** The first line of every pool file the panel writes: its mark (./marks.ts). */
export const poolHeader = (username: string, version: string) => `; PHP ${version} of ${username}: written by the hosting panel; edit through the panel.`;

const isPanelPoolFile = (pool: Pick<Pool, "username" | "version">, contents: string) => contents.startsWith(`${poolHeader(pool.username, pool.version)}\n`);

/** The PHP versions among `versions` whose pool file of `username` exists and is not the panel's. */
export async function foreignPoolFiles(username: string, versions: string[]): Promise<string[]> {
  const foreign: string[] = [];
  for (const version of versions) {
    const contents = await readIfExists(poolFilePath(username, version));
    if (contents !== null && !isPanelPoolFile({ username, version }, contents)) foreign.push(version);
  }
  return foreign;
}

/** 422 at `username`: a pool file of the account's name exists and is not the panel's. */
function foreignPoolError(file: string) {
  console.error(`[php] ${file} was not written by the panel: refused`);
  return validationError("username", "has a PHP-FPM pool file on this server that the panel did not write; the panel leaves it alone");
}

/** The ping page of every pool: FPM answers it itself; not a .php name, so no site's nginx passes it on. */
const PING_PATH = "/.panel-pool-ping";

/** The answer of a pool's ping page: the revision of the rest of its file. */
const revisionOf = (body: string) => `revision-${createHash("sha256").update(body).digest("hex").slice(0, 32)}`;

export function renderPool(unchecked: Pool, socket: string, roots: PoolRoots): string {
  const body = renderPoolSettings(unchecked, socket, roots);
  return `${body}ping.path = ${PING_PATH}\nping.response = ${revisionOf(body)}\n`;
}

function renderPoolSettings(unchecked: Pool, socket: string, roots: PoolRoots): string {
  const pool = checkedPool(unchecked, socket, roots);
  const { settings } = pool;
  const tmp = path.join(pool.home, "tmp");
  return [
    poolHeader(pool.username, pool.version),
    `[${pool.username}-php${pool.version}]`,
    `user = ${pool.user}`,
    `group = ${pool.user}`,
    `listen = ${socket}`,
    `listen.owner = ${pool.user}`,
    `listen.group = ${pool.listenGroup}`,
    "listen.mode = 0660",
    "pm = ondemand",
    "pm.max_children = 5",
    "pm.process_idle_timeout = 10s",
    "pm.max_requests = 500",
    `chdir = ${pool.home}`,
    `php_admin_value[open_basedir] = ${pool.home}/:${tmp}/`,
    `php_admin_value[upload_tmp_dir] = ${tmp}`,
    `php_admin_value[session.save_path] = ${tmp}`,
    `php_admin_value[sys_temp_dir] = ${tmp}`,
    `env[TMPDIR] = ${tmp}`,
    // The account's PHP settings (lib/php-settings): php_admin_*, so no script can raise them.
    `php_admin_value[upload_max_filesize] = ${settings.upload_max_filesize_mb}M`,
    `php_admin_value[post_max_size] = ${settings.post_max_size_mb}M`,
    `php_admin_value[memory_limit] = ${settings.memory_limit_mb}M`,
    `php_admin_value[max_execution_time] = ${settings.max_execution_time_s}`,
    `php_admin_value[max_input_vars] = ${settings.max_input_vars}`,
    `php_admin_flag[display_errors] = ${settings.display_errors ? "on" : "off"}`,
    // mail() goes out through the machine's submission service with the account's own login, so it
    // is counted against the plan's limits and may use only the account's domains (docs/email.md
    // "PHP's mail()"); Postfix's sendmail is not the customer's (authorized_submit_users).
    `php_admin_value[sendmail_path] = ${MSMTP_BINARY} -C ${path.posix.join(pool.home, PHP_MAIL_CONFIG)} --read-envelope-from -t`,
    // The customer's own error log (HOME/logs/, made by createHome), not the server's.
    "php_admin_flag[log_errors] = on",
    `php_admin_value[error_log] = ${pool.home}/logs/php-error.log`,
    `request_terminate_timeout = ${settings.max_execution_time_s + 30}s`,
    "",
  ].join("\n");
}

/** Reloads the PHP-FPM of each version whose pools changed (PHP_FPM_RELOAD_COMMAND, {version} replaced). */
export async function reloadPhp(versions: Iterable<string>): Promise<void> {
  const command = env().phpFpmReloadCommand;
  if (!command) return;
  for (const version of versions) {
    const failure = await runCommand(command, { version });
    if (failure) console.error(`[php] pools of PHP ${version} written, but the reload failed: ${failure}`);
  }
}

const POOL_WAIT_MS = 10_000;
const PING_TIMEOUT_MS = 2_000;

/** Whether the pool on `socket` answers its ping page with `revision`: the file written is the one serving. */
const serves = (socket: string, revision: string) =>
  fastcgiGet(socket, PING_PATH, PING_TIMEOUT_MS).then(
    (answer) => answer === revision,
    () => false,
  );

/**
 * After a reload, until every pool of `pools` answers with the revision of the file just written:
 * a new pool's socket appears only once PHP-FPM has read its file, and a changed pool's old
 * workers go on serving until the master acts on the signal the reload command only sent. Then a
 * site pointing at it runs with its new settings at once. Longer than 10 s is logged, never fatal.
 */
export async function waitForPools(pools: Pool[]): Promise<void> {
  if (!env().phpFpmReloadCommand) return;
  const deadline = Date.now() + POOL_WAIT_MS;
  for (const pool of pools) {
    const socket = poolSocketPath(pool.username, pool.version);
    const revision = revisionOf(renderPoolSettings(pool, socket, poolRoots()));
    while (!(await serves(socket, revision))) {
      if (Date.now() > deadline) return console.error(`[php] the pool on ${socket} did not serve its new settings within ${POOL_WAIT_MS / 1000} s of the reload`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/** Writes the pool when its content changed (true then; the caller reloads that version). */
export async function writePool(pool: Pool): Promise<boolean> {
  const file = poolFilePath(pool.username, pool.version);
  const contents = renderPool(pool, poolSocketPath(pool.username, pool.version), poolRoots());
  const before = await readIfExists(file);
  if (before === contents) return false;
  if (before !== null && !isPanelPoolFile(pool, before)) throw foreignPoolError(file);
  // nginx's workers connect to the sockets in it; the pool file is read by PHP-FPM's master (root) only.
  await makeDirectories(env().phpFpmSocketDir, 0o755);
  await writeAtomically(file, contents, 0o600);
  return true;
}

/** Removes the account's pool of one version; true when there was one (the caller reloads). One the panel did not write stays. */
export async function removePool(username: string, version: string): Promise<boolean> {
  const file = poolFilePath(username, version);
  const before = await readIfExists(file);
  if (before === null) return false;
  if (!isPanelPoolFile({ username, version }, before)) {
    console.error(`[php] ${file} was not written by the panel: left as it is`);
    return false;
  }
  await fs.rm(file, { force: true });
  return true;
}
