import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { NodeHost } from "./node-host";
import { freePort } from "./server";

// A MariaDB server of a test node's own (Debian mariadb-server's mariadbd), inside its network
// namespace on 127.0.0.1:3306 — the node's own loopback — with its data under the node's
// directory: each node's databases are its own, as on separate machines. Stopped with the node
// (NodeHost.stop ends every process inside).

/** Starts it; the node's MYSQL_PROVISION_URL. */
export async function startNodeMariadb(host: NodeHost): Promise<string> {
  const dir = path.join(host.root, "mariadb");
  fs.mkdirSync(dir, { recursive: true });
  execFileSync("mariadb-install-db", ["--no-defaults", `--datadir=${path.join(dir, "data")}`, "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"], {
    stdio: "ignore",
  });
  host.start(
    "mariadbd",
    [
      "--no-defaults",
      `--datadir=${path.join(dir, "data")}`,
      `--socket=${path.join(dir, "mariadb.sock")}`,
      `--pid-file=${path.join(dir, "mariadb.pid")}`,
      `--log-error=${path.join(dir, "error.log")}`,
      "--bind-address=127.0.0.1",
      "--port=3306",
      "--user=root",
      "--innodb-buffer-pool-size=64M",
    ],
    { stdio: "ignore" },
  );
  const started = Date.now();
  while (host.run("mariadb-admin", ["--no-defaults", "-h", "127.0.0.1", "-P", "3306", "-u", "root", "status"]).code !== 0) {
    if (Date.now() - started > 30_000) throw new Error(`the node's MariaDB did not start:\n${fs.readFileSync(path.join(dir, "error.log"), "utf8").slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return "mysql://root@127.0.0.1:3306";
}

/**
 * One MariaDB server on this machine's side, for two nodes to share (the set-up docs/nodes.md
 * warns against): listening on every address at a free port, reached by a node at its gateway,
 * with a root of a random password for those connections. `urlFor(gateway)`: a node's
 * MYSQL_PROVISION_URL. stop() ends it and removes its directory.
 */
export async function startSharedMariadb(dir: string): Promise<{ urlFor(gateway: string): string; stop(): Promise<void> }> {
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const password = randomBytes(12).toString("hex");
  const socket = path.join(dir, "mariadb.sock");
  execFileSync("mariadb-install-db", ["--no-defaults", `--datadir=${path.join(dir, "data")}`, "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"], { stdio: "ignore" });
  const server = spawn(
    "mariadbd",
    ["--no-defaults", `--datadir=${path.join(dir, "data")}`, `--socket=${socket}`, `--pid-file=${path.join(dir, "mariadb.pid")}`, `--log-error=${path.join(dir, "error.log")}`, "--bind-address=0.0.0.0", `--port=${port}`, "--user=root", "--innodb-buffer-pool-size=64M"],
    { stdio: "ignore" },
  );
  const asRoot = (sql: string) => execFileSync("mariadb", ["--no-defaults", `--socket=${socket}`, "-u", "root", "-e", sql], { stdio: "ignore" });
  const started = Date.now();
  for (;;) {
    try {
      asRoot("SELECT 1");
      break;
    } catch {
      if (Date.now() - started > 30_000) throw new Error("the shared MariaDB did not start");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  asRoot(`CREATE USER 'root'@'%' IDENTIFIED BY '${password}'; GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;`);
  return {
    urlFor: (gateway) => `mysql://root:${password}@${gateway}:${port}`,
    async stop() {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      server.kill("SIGKILL");
      if (server.exitCode === null && server.signalCode === null) await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
