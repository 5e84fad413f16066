import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import type { TlsOptions } from "@nats-io/transport-node";
import { natsTls } from "@/lib/agent/transport";
import { freePort } from "./server";
import { makeTestCertificates, type TestCertificates } from "./tls";

// A NATS server with JetStream of the test's own (Debian nats-server): its own port, store and
// configuration under `root`, whose authorization is the file the panel writes (NATS_AUTH_FILE)
// and reloads (NATS_RELOAD_COMMAND: SIGHUP to this server). Never the machine's own server. As
// docs/nodes.md sets it up: TLS only (`tls {}`, a certificate of the test's own CA for 127.0.0.1
// and panel.test: ./tls.ts), nobody admitted before the panel writes its authorization.

export interface TestNats {
  /** tls://127.0.0.1:PORT, as the panel reaches it. */
  url: string;
  port: number;
  /** The CA and the server's certificate (the test's panel front may serve the same). */
  tls: TestCertificates;
  /** What a test's own NATS client needs: the URL and its TLS, verified as the panel's (lib/agent/transport.ts). */
  options: { servers: string; tls?: TlsOptions };
  /** The panel's settings for this server (DATA_DIR's seed file is the panel's default). */
  env: Record<string, string>;
  authFile: string;
  /** What the server logged (permission violations, authorization errors). */
  log(): string;
  stop(): Promise<void>;
  /** Stops it and starts it again on the same port and store (its streams and consumers kept). */
  restart(): Promise<void>;
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nats-server exited:\n${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => {
        socket.end();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() - started > 15_000) throw new Error(`nats-server did not listen:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `listen`: the address it listens on (a test node in a network namespace reaches it there). */
export async function startNats(root: string, listen = "127.0.0.1"): Promise<TestNats> {
  const port = await freePort();
  fs.mkdirSync(root, { recursive: true });
  const certificates = makeTestCertificates(path.join(root, "tls"));
  const authFile = path.join(root, "panel-auth.conf");
  const logFile = path.join(root, "nats.log");
  // Nobody may connect until the panel writes its authorization (its first start): as
  // docs/nodes.md, one user whose password nobody knows (an empty list would admit anyone).
  fs.writeFileSync(authFile, `authorization { users = [ { user: nobody, password: "${randomBytes(32).toString("hex")}" } ] }\n`, { mode: 0o600 });
  const config = path.join(root, "nats-server.conf");
  fs.writeFileSync(
    config,
    [
      `listen: "${listen}:${port}"`,
      `jetstream { store_dir: "${path.join(root, "jetstream")}" }`,
      // As docs/nodes.md "Three machines, step by step" sets it: a node's reconcile carries every
      // account it hosts.
      "max_payload: 8MB",
      `tls { cert_file: "${certificates.certFile}", key_file: "${certificates.keyFile}" }`,
      `log_file: "${logFile}"`,
      // nats-server reads an include relative to the including file.
      `include "${path.basename(authFile)}"`,
      "",
    ].join("\n"),
  );
  const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : "");
  const start = async () => {
    const started = spawn("nats-server", ["-c", config], { stdio: "ignore" });
    await waitForPort(port, started, log);
    return started;
  };
  let child = await start();
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const url = `tls://127.0.0.1:${port}`;
  return {
    url,
    port,
    tls: certificates,
    options: { servers: url, ...natsTls(url, certificates.caFile) },
    authFile,
    // By its configuration's path: the same command reaches the server after a restart.
    env: { NATS_URL: url, NATS_CA_FILE: certificates.caFile, NATS_AUTH_FILE: authFile, NATS_RELOAD_COMMAND: `pkill -HUP -f ${config}` },
    log,
    stop,
    async restart() {
      await stop();
      child = await start();
    },
  };
}
