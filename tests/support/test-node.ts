import { type ChildProcess, execFileSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { PANEL_SCRIPT } from "./cli";
import { apiClient, type Credentials } from "./http";
import type { TestNats } from "./nats";
import { type NodeHost, startNodeHost } from "./node-host";
import { PANEL_HOST_NAME, startTlsFront } from "./tls";
import { type MailServers, startMailServers } from "./mail-servers";
import { startNodeMariadb } from "./node-mariadb";
import { startWebServers, type WebServers } from "./web-servers";

// A hosting node as an administrator sets one up (docs/nodes.md "Three machines, step by step"),
// for tests and benches: a machine of its own (tests/support/node-host.ts) with its own nginx and
// PHP-FPM, added through the panel's API, enrolled with `panel node join` run on it, and its agent
// (`panel node agent`) started there. Its configuration is its own: no database, its own homes and
// data.

export interface TestNode {
  name: string;
  host: NodeHost;
  servers: WebServers;
  /** Its Postfix, Dovecot and rspamd (with `mail`), on its address and the standard ports. */
  mail: MailServers | null;
  /** The node's panel.env, as variables. */
  env: Record<string, string>;
  /** Its id in the panel. */
  id: number;
  agent: ChildProcess | null;
  /** What its agent printed. */
  agentLog(): string;
  startAgent(): void;
  /** SIGKILL, as a crash. */
  stopAgent(): Promise<void>;
  /** The panel's command line run on the node. */
  panel(args: string[]): Promise<{ code: number; output: string }>;
  /** A page of its nginx, asked for `host` at its address, as a visitor's browser would. */
  visit(host: string, urlPath?: string): Promise<{ status: number; text: string }>;
  stop(): Promise<void>;
}

/**
 * Adds node `name` to the panel at `panelPort` (as `admin`), enrols it and starts its agent;
 * resolves once it is active. `httpPort`: its nginx's (an ACME test's CA validates every node on one port);
 * `mariadb`: a MariaDB server of its own (./node-mariadb.ts) as its MYSQL_PROVISION_URL;
 * `mail`: Postfix, Dovecot and rspamd of its own (./mail-servers.ts), host name mail.<name>.panel-test.invalid.
 */
export async function startTestNode(
  name: string,
  options: {
    panelPort: number;
    admin: Credentials;
    nats: TestNats;
    /** Settings of its panel.env beyond the usual; a function gets the node's machine (its gateway, for a server on this machine's side). */
    env?: Record<string, string> | ((host: NodeHost) => Record<string, string>);
    httpPort?: number;
    mariadb?: boolean;
    mail?: boolean;
  },
): Promise<TestNode> {
  const host = await startNodeHost(name);
  let servers: WebServers;
  let mysqlUrl: string | null = null;
  let mail: MailServers | null = null;
  try {
    servers = await startWebServers(path.join(host.root, "web"), host.start, options.httpPort);
    if (options.mariadb) mysqlUrl = await startNodeMariadb(host);
    if (options.mail) mail = await startMailServers(path.join(host.root, "mail"), { machine: { ...host, hostName: `mail.${name}.panel-test.invalid` } });
  } catch (error) {
    await host.stop();
    throw error;
  }
  let agent: ChildProcess | null = null;
  let log = "";
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin",
    PANEL_ENV_FILE: "/dev/null",
    DATA_DIR: path.join(host.root, "data"),
    HOME_ROOT: path.join(host.root, "home"),
    SYSTEM_USERS: "1",
    LOGROTATE_CONFIG_FILE: path.join(host.root, "logrotate.conf"),
    // Its own, as everything of a node: not the machine's /var/lib.
    ACME_CHALLENGE_DIR: path.join(host.root, "acme-challenge"),
    ...servers.env,
    ...(mysqlUrl ? { MYSQL_PROVISION_URL: mysqlUrl } : {}),
    ...mail?.env,
    ...(typeof options.env === "function" ? options.env(host) : options.env),
  };
  const runOnNode = (args: string[]) => host.start(process.execPath, [PANEL_SCRIPT, ...args], { env: env as NodeJS.ProcessEnv, cwd: process.cwd(), stdio: ["ignore", "pipe", "pipe"] });
  const node: TestNode = {
    name,
    host,
    servers,
    mail,
    env,
    id: 0,
    get agent() {
      return agent;
    },
    agentLog: () => log,
    startAgent() {
      agent = runOnNode(["node", "agent"]);
      agent.stdout!.on("data", (chunk) => (log += chunk));
      agent.stderr!.on("data", (chunk) => (log += chunk));
    },
    async stopAgent() {
      const running = agent;
      agent = null;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once("exit", resolve));
      running.kill("SIGCONT");
      running.kill("SIGKILL");
      await exited;
    },
    panel(args) {
      const child = runOnNode(args);
      let output = "";
      child.stdout!.on("data", (chunk) => (output += chunk));
      child.stderr!.on("data", (chunk) => (output += chunk));
      return new Promise((resolve) => child.on("close", (code) => resolve({ code: code ?? 1, output })));
    },
    visit(hostName, urlPath = "/") {
      return new Promise((resolve, reject) => {
        const request = http.get({ host: host.address, port: servers.httpPort, path: urlPath, headers: { host: hostName }, timeout: 5000 }, (response) => {
          let text = "";
          response.setEncoding("utf8");
          response.on("data", (chunk) => (text += chunk));
          response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
        });
        request.on("error", reject);
      });
    },
    async stop() {
      await node.stopAgent();
      await servers.stop().catch(() => undefined);
      await mail?.stop().catch(() => undefined);
      await host.stop();
    },
  };
  try {
    const admin = apiClient(`http://127.0.0.1:${options.panelPort}`, options.admin);
    const created = await admin.post("/api/admin/nodes", { name, ipv4: host.address });
    if (created.status !== 201) throw new Error(`the node was not added: ${JSON.stringify(created.body)}`);
    node.id = created.body.id;
    // As docs/nodes.md "Three machines, step by step": the node knows machine P by its name (here
    // its own /etc/hosts), reaches the panel over https (TLS in front of it, as nginx is there)
    // and NATS over tls, both certificates verified against the administrator's CA (--ca).
    fs.appendFileSync(path.join(host.root, "etc", "hosts"), `${host.gateway} ${PANEL_HOST_NAME}\n`);
    const front = await startTlsFront(options.panelPort, options.nats.tls, host.gateway);
    const joined = await node
      .panel([
        "node", "join",
        "--panel", `https://${PANEL_HOST_NAME}:${front.port}`,
        "--token", created.body.enrolment_token,
        "--nats", `tls://${PANEL_HOST_NAME}:${options.nats.port}`,
        "--ca", options.nats.tls.caFile,
      ])
      .finally(() => front.stop());
    if (joined.code !== 0) throw new Error(`panel node join failed: ${joined.output}`);
    node.startAgent();
    const started = Date.now();
    while ((await admin.get(`/api/admin/nodes/${node.id}`)).body.state !== "active") {
      if (Date.now() - started > 30_000) throw new Error(`the agent of ${name} did not come up:\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } catch (error) {
    await node.stop();
    throw error;
  }
  return node;
}

/** The two nodes reach each other through this machine (each has a route to the other's address; the machine forwards between their links only). */
export function linkNodes(a: TestNode, b: TestNode): void {
  for (const [from, to] of [[a, b], [b, a]]) {
    const routed = from.host.run("ip", ["route", "replace", `${to.host.address}/32`, "via", from.host.gateway]);
    if (routed.code !== 0) throw new Error(`no route from ${from.name} to ${to.name}: ${routed.stderr}`);
    const device = /\bdev (\S+)/.exec(execFileSync("ip", ["-o", "route", "get", from.host.address], { encoding: "utf8" }))![1];
    fs.writeFileSync(`/proc/sys/net/ipv4/conf/${device}/forwarding`, "1\n");
  }
}
