import fs from "node:fs/promises";
import path from "node:path";
import { env } from "@/lib/env";
import { validationError } from "@/lib/errors";
import { checkedAbsolutePath, checkedLinuxName, checkedPathInside, refuseRenderedValue } from "./render-checks";
import { readIfExists, runCommand, writeAtomically } from "./system";

// PHP-FPM pools, one per account and PHP version: PHP_FPM_POOL_DIR (with {version}) holds
// `panel-<username>.conf` (the prefix tells the panel's pools from the distribution's www.conf),
// listening on PHP_FPM_SOCKET_DIR/<username>-php<version>.sock, running as the account's user
// with open_basedir limited to its home and private tmp, processes started on demand.

export interface Pool {
  username: string;
  version: string;
  /** The Linux user the pool's processes run as. */
  user: string;
  /** The web server's group: it alone may connect to the socket. */
  listenGroup: string;
  home: string;
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
  return pool;
}

export function renderPool(unchecked: Pool, socket: string, roots: PoolRoots): string {
  const pool = checkedPool(unchecked, socket, roots);
  const tmp = path.join(pool.home, "tmp");
  return [
    `; PHP ${pool.version} of ${pool.username}: written by the hosting panel; edit through the panel.`,
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

/** Writes the pool when its content changed (true then; the caller reloads that version). */
export async function writePool(pool: Pool): Promise<boolean> {
  const file = poolFilePath(pool.username, pool.version);
  const contents = renderPool(pool, poolSocketPath(pool.username, pool.version), poolRoots());
  if ((await readIfExists(file)) === contents) return false;
  await fs.mkdir(env().phpFpmSocketDir, { recursive: true });
  await writeAtomically(file, contents);
  return true;
}

/** Removes the account's pool of one version; true when there was one (the caller reloads). */
export async function removePool(username: string, version: string): Promise<boolean> {
  const file = poolFilePath(username, version);
  if ((await readIfExists(file)) === null) return false;
  await fs.rm(file, { force: true });
  return true;
}
