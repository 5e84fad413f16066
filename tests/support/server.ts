import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { bundleEntry } from "../../scripts/bundles.mjs";

// A real panel server (server.ts over the `next build` output) in a child process.

export interface TestServer {
  baseUrl: string;
  port: number;
  process: ChildProcess;
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

const EXIT_WITH_PARENT = path.join(import.meta.dirname, "exit-with-parent.mjs");

/**
 * `env` is laid over this process's environment; a name given as undefined is left out.
 * `nodeArgs`: flags for the server's node process, e.g. `--cpu-prof`. Node runs the server's
 * bundle (scripts/bundles.mjs) as `npm start` does, with no loader: through tsx a start took twice
 * the CPU (docs/testing.md "How `npm test` runs"). With --liftoff-only, as the test files run: a
 * test server lives for one file, too short for V8's optimizing compiles of PGlite to pay back.
 */
export async function startServer(env: Record<string, string | undefined>, nodeArgs: string[] = []): Promise<TestServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--liftoff-only", ...nodeArgs, "--import", EXIT_WITH_PARENT, await bundleEntry("server")], {
    env: {
      ...process.env,
      NODE_ENV: "production",
      METRICS_INTERVAL_S: "3600",
      // Every response the tests see is also checked by its full zod schema (lib/http/response-shape.ts).
      PANEL_CHECK_RESPONSES: "1",
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      // No configuration file unless a test names one: a panel.env in the project is not the test's.
      PANEL_ENV_FILE: "/dev/null",
      // No nightly backup in the middle of a test run.
      BACKUP_SCHEDULE: "off",
      ...env,
      PORT: String(port),
    },
    // stdin: the pipe whose end tells the server its parent is gone (EXIT_WITH_PARENT).
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s:\n${output}`)), 60_000);
    const check = () => {
      if (output.includes("Hosting panel listening")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    process: child,
    output: () => output,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
