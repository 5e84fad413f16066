import { type ChildProcess, execFileSync, spawn, type SpawnOptions } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { freePort } from "./server";

// A private nginx and php-fpm 8.2 for the web-hosting tests: own configurations, own ports and
// directories under `root`, started as children and stopped by stop() — never the machine's
// services. `env` is what the panel needs to write sites and pools for them.

export interface WebServers {
  httpPort: number;
  env: Record<string, string>;
  stop(): Promise<void>;
}

function waitForFile(file: string, child: ChildProcess, output: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = () => {
      if (fs.existsSync(file)) return resolve();
      if (child.exitCode !== null || Date.now() - started > 15_000) return reject(new Error(`did not start:\n${output()}`));
      setTimeout(check, 50);
    };
    check();
  });
}

/** How a server is started: here, or inside a test node (tests/support/node-host.ts). */
export type Starter = (program: string, args: string[], options: SpawnOptions) => ChildProcess;

function startChild(start: Starter, program: string, args: string[], readyFile: string) {
  const child = start(program, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  child.on("error", (error) => (output += `${error}\n`)); // a missing program fails the wait, not the process
  return { child, ready: waitForFile(readyFile, child, () => output) };
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

/** `httpPort`: nginx's port (default a free one here; a test node has every port of its own). */
export async function startWebServers(root: string, start: Starter = spawn, httpPort?: number): Promise<WebServers> {
  httpPort ??= await freePort();
  const dirs = {
    sites: path.join(root, "sites"),
    pools: path.join(root, "pools", "{version}"),
    sockets: path.join(root, "run"),
    nginx: path.join(root, "nginx"),
  };
  for (const dir of [dirs.sites, dirs.pools.replace("{version}", "8.2"), dirs.sockets, dirs.nginx]) fs.mkdirSync(dir, { recursive: true });
  const nginxConf = path.join(dirs.nginx, "nginx.conf");
  fs.writeFileSync(
    nginxConf,
    [
      "user www-data www-data;",
      "worker_processes 1;",
      `pid ${dirs.nginx}/nginx.pid;`,
      `error_log ${dirs.nginx}/error.log;`,
      "events {}",
      "http {",
      "    access_log off;",
      `    include ${dirs.sites}/*.conf;`,
      // Names nobody hosts (a deleted domain) land here.
      `    server { listen ${httpPort} default_server; return 404 "not hosted here\\n"; }`,
      "}",
      "",
    ].join("\n"),
  );
  const fpmConf = path.join(root, "php-fpm.conf");
  fs.writeFileSync(
    fpmConf,
    [
      "[global]",
      `pid = ${root}/php-fpm.pid`,
      `error_log = ${root}/php-fpm.log`,
      // As docs/applications.md asks of a server: a reload lets each worker finish the request it
      // has taken (Debian's 0 kills it: a 502 right after a PHP setting changed).
      "process_control_timeout = 10s",
      // php-fpm refuses to start without a pool: one that never gets a request.
      "[placeholder]",
      "user = www-data",
      "group = www-data",
      `listen = ${dirs.sockets}/placeholder.sock`,
      "pm = ondemand",
      "pm.max_children = 1",
      `include = ${dirs.pools.replace("{version}", "8.2")}/*.conf`,
      "",
    ].join("\n"),
  );
  const nginxArgs = ["-c", nginxConf, "-p", dirs.nginx];
  const nginx = startChild(start, "nginx", [...nginxArgs, "-g", "daemon off;"], path.join(dirs.nginx, "nginx.pid"));
  const fpm = startChild(start, "php-fpm8.2", ["-F", "-R", "-y", fpmConf], path.join(root, "php-fpm.pid"));
  const stop = async () => {
    await Promise.all([stopChild(nginx.child), stopChild(fpm.child)]);
  };
  try {
    await Promise.all([nginx.ready, fpm.ready]);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    httpPort,
    env: {
      WEB_SERVER: "nginx",
      NGINX_SITES_DIR: dirs.sites,
      NGINX_TEST_COMMAND: `nginx -t -q ${nginxArgs.join(" ")}`,
      NGINX_RELOAD_COMMAND: `nginx -s reload ${nginxArgs.join(" ")}`,
      NGINX_PID_FILE: path.join(dirs.nginx, "nginx.pid"),
      WEB_HTTP_PORT: String(httpPort),
      PHP_FPM_POOL_DIR: dirs.pools,
      PHP_FPM_SOCKET_DIR: dirs.sockets,
      PHP_FPM_RELOAD_COMMAND: `kill -USR2 ${fpm.child.pid}`,
    },
    stop,
  };
}

/** The panel's settings for sites on `servers` with a Linux user per account, homes and logs under `root`. */
export function systemUsersHostingEnv(servers: WebServers, root: string): Record<string, string> {
  return {
    ...servers.env,
    SYSTEM_USERS: "1",
    HOME_ROOT: path.join(root, "home"),
    ACCESS_LOG_DIR: path.join(root, "logs"),
    LOGROTATE_CONFIG_FILE: path.join(root, "logrotate.conf"),
    DISK_USAGE_MAX_AGE_S: "1",
  };
}

/**
 * Removes test users (their processes, the user, its group, which userdel keeps while the web
 * server's user is in it), whatever state a failed test left them in.
 */
export function removeLinuxUsers(usernames: string[]) {
  for (const name of usernames) {
    for (const [program, args] of [
      ["pkill", ["--signal", "KILL", "--euid", name]],
      ["crontab", ["-r", "-u", name]],
      ["userdel", [name]],
      ["groupdel", [name]],
    ] as const) {
      try {
        execFileSync(program, args, { stdio: "ignore" });
      } catch {
        // none, never created, or already removed by the panel
      }
    }
  }
}

/** A request to the test nginx for `host`, as a visitor's browser makes it (fetch cannot set Host). */
export function visitSite(servers: WebServers, host: string, urlPath = "/"): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: "127.0.0.1", port: servers.httpPort, path: urlPath, headers: { host } }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.on("error", reject);
  });
}
