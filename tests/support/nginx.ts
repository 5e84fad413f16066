import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

// An nginx of the test's own (never the machine's service): its own prefix, config and port,
// in the foreground as a child process, stopped by stop() even when the test failed.

export interface TestNginx {
  dir: string;
  stop(): Promise<void>;
}

/** Starts nginx with `http` as the body of its http block; resolves once `port` accepts. */
export async function startNginx(http: string, port: number): Promise<TestNginx> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "nginx-"));
  fs.mkdirSync(path.join(dir, "logs"));
  const conf = path.join(dir, "nginx.conf");
  fs.writeFileSync(
    conf,
    `# Workers as root: the test's files live in private temporary directories.
user root;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/logs/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${http}
}
`,
  );
  const child: ChildProcess = spawn("nginx", ["-c", conf, "-p", dir, "-g", "daemon off;"], { stdio: ["ignore", "ignore", "pipe"] });
  let errors = "";
  child.stderr!.on("data", (chunk) => (errors += chunk));
  child.on("error", (error) => (errors += `${error}\n`)); // a missing nginx fails the wait, not the process
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`nginx did not start: ${errors}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { dir, stop };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => socket.end(() => resolve(true)));
    socket.once("error", () => resolve(false));
  });
}
