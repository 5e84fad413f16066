import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "./server";

// A throwaway PostgreSQL cluster of the test's own (Debian's postgresql package), to stop and
// start under a running panel without touching the machine's server. PostgreSQL refuses to run
// as root, so as root every command runs as the `postgres` user.

export interface Cluster {
  /** Superuser URL of the cluster's `postgres` database. */
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** `pg_ctl restart -m fast`: sessions are cut, the server is back within a moment. */
  restart(): Promise<void>;
  /** Stops the cluster and removes its files. */
  remove(): Promise<void>;
}

function postgresBin(): string {
  const root = "/usr/lib/postgresql";
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  if (!versions.length) throw new Error("PostgreSQL server binaries not found under /usr/lib/postgresql");
  return path.join(root, versions[0], "bin");
}

const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

// Asynchronous, so that requests of the test keep flowing while the cluster stops and starts.
async function runAsPostgres(program: string, args: string[]) {
  if (process.getuid?.() === 0) await promisify(execFile)("su", ["postgres", "-s", "/bin/sh", "-c", [program, ...args].map(quote).join(" ")]);
  else await promisify(execFile)(program, args);
}

export async function createCluster(): Promise<Cluster> {
  const bin = postgresBin();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-pgcluster-"));
  const dataDir = path.join(dir, "data");
  const socketDir = path.join(dir, "socket");
  fs.mkdirSync(socketDir);
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString());
    for (const entry of [dir, socketDir]) fs.chownSync(entry, uid, gid);
  }
  const port = await freePort();
  const pgCtl = (...args: string[]) => runAsPostgres(path.join(bin, "pg_ctl"), ["-D", dataDir, "-w", "-t", "30", ...args]);
  const serverOptions = ["-o", `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off`, "-l", path.join(dir, "log")];

  // Stopped whatever state it is in (a start that timed out may have left a postmaster running);
  // pg_ctl's "no server running" is not an error here.
  const removeCluster = async () => {
    await pgCtl("stop", "-m", "immediate").catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await runAsPostgres(path.join(bin, "initdb"), ["-D", dataDir, "-U", "postgres", "-A", "trust", "--no-sync"]);
    await pgCtl("start", ...serverOptions);
  } catch (error) {
    await removeCluster();
    throw error;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await pgCtl("start", ...serverOptions);
    },
    async stop() {
      await pgCtl("stop", "-m", "fast");
    },
    async restart() {
      await pgCtl("restart", "-m", "fast", ...serverOptions);
    },
    remove: removeCluster,
  };
}
