import { type ChildProcess, execFileSync, spawn, type SpawnOptions } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

// A hosting server of its own on this one machine, for the nodes tests: a network namespace
// (its own address, reached over a veth pair from the machine's side) and a mount namespace
// whose /etc is a private copy (its own passwd, group, shadow, nginx and PHP-FPM configuration)
// and whose cron spool is its own, so the users its agent makes and their crontabs exist only
// there, with user and group ids from a range of its own (login.defs): as on two real machines,
// the same username on two nodes has two different uids, so a node's `pkill --euid` or `userdel`
// never reaches another node's (or this machine's) processes, although they share one process
// table. Everything a node runs goes through exec() or start() (nsenter into both namespaces).
// stop() ends every process inside and removes the namespace, the veth pair and the node's
// directory, whatever state a test left them in.

export interface NodeHost {
  /** The node's address, in its network namespace. */
  address: string;
  /** The machine's side of the veth pair: what the node reaches the panel's services at. */
  gateway: string;
  /** The node's directory (its /etc copy under etc/, everything else a test puts there). */
  root: string;
  /** Starts a program inside the node. */
  start(program: string, args: string[], options?: SpawnOptions): ChildProcess;
  /** Runs a program inside the node to its end: its exit code and output. */
  run(program: string, args: string[]): { code: number; stdout: string; stderr: string };
  stop(): Promise<void>;
}

const quiet = (program: string, args: string[]) => {
  try {
    execFileSync(program, args, { stdio: "ignore" });
  } catch {
    // already gone
  }
};

/**
 * The machine's /etc copied to `target`, as it is between two changes: other test files make and
 * remove users meanwhile, and useradd's lock and temporary files (passwd.lock, subgid.9818) come
 * and go while cp walks the folder — a copy that met one going is made again, and the ones it
 * caught are left out (a lock of a process of this machine would stop the node's own useradd).
 */
function copyEtc(target: string) {
  for (let attempt = 1; ; attempt++) {
    try {
      execFileSync("cp", ["-a", "/etc", target], { stdio: "pipe" });
      break;
    } catch (error) {
      fs.rmSync(target, { recursive: true, force: true });
      if (attempt === 5) throw error;
    }
  }
  const locksAndTemporaries = /^(passwd|shadow|group|gshadow|subuid|subgid)(\.lock|\.\d+|\+|-\d+)$/;
  for (const name of fs.readdirSync(target)) if (locksAndTemporaries.test(name)) fs.rmSync(path.join(target, name), { force: true });
}

/** New users and groups in `[first, first + 999]`, as useradd and groupadd read login.defs. */
function giveOwnIdRange(loginDefs: string, first: number) {
  const limits: Record<string, number> = { UID_MIN: first, UID_MAX: first + 999, GID_MIN: first, GID_MAX: first + 999 };
  let text = fs.readFileSync(loginDefs, "utf8");
  for (const [name, value] of Object.entries(limits)) {
    const line = new RegExp(`^${name}\\s.*$`, "m");
    text = line.test(text) ? text.replace(line, `${name} ${value}`) : `${text}\n${name} ${value}\n`;
  }
  fs.writeFileSync(loginDefs, text);
}

export async function startNodeHost(label: string): Promise<NodeHost> {
  const id = randomBytes(3).toString("hex");
  const namespace = `panel-${label}-${id}`;
  const [hostSide, nodeSide] = [`vp${id}`, `vn${id}`];
  // A /30 of its own in 10.200.0.0/14, unlikely to meet another run's.
  const block = randomBytes(2).readUInt16BE() % 16384;
  const base = `10.${200 + (block >> 12)}.${(block >> 4) & 255}.${(block & 15) * 16}`;
  const prefix = base.split(".").slice(0, 3).join(".");
  const last = Number(base.split(".")[3]);
  const gateway = `${prefix}.${last + 1}`;
  const address = `${prefix}.${last + 2}`;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `panel-node-${label}-`));
  // As a server's / is: the web server's user passes through it to the homes.
  fs.chmodSync(root, 0o755);
  let holder: ChildProcess | null = null;

  const stop = async () => {
    const pids = (() => {
      try {
        return execFileSync("ip", ["netns", "pids", namespace], { encoding: "utf8" }).split("\n").filter(Boolean);
      } catch {
        return [] as string[];
      }
    })();
    for (const pid of pids) quiet("kill", ["-KILL", pid]);
    holder?.kill("SIGKILL");
    quiet("ip", ["netns", "del", namespace]);
    quiet("ip", ["link", "del", hostSide]);
    fs.rmSync(root, { recursive: true, force: true });
  };

  try {
    copyEtc(path.join(root, "etc"));
    giveOwnIdRange(path.join(root, "etc", "login.defs"), 100_000 + block * 1000);
    execFileSync("ip", ["netns", "add", namespace]);
    execFileSync("ip", ["link", "add", hostSide, "type", "veth", "peer", "name", nodeSide]);
    execFileSync("ip", ["link", "set", nodeSide, "netns", namespace]);
    execFileSync("ip", ["addr", "add", `${gateway}/30`, "dev", hostSide]);
    execFileSync("ip", ["link", "set", hostSide, "up"]);
    for (const args of [
      ["addr", "add", `${address}/30`, "dev", nodeSide],
      ["link", "set", nodeSide, "up"],
      ["link", "set", "lo", "up"],
    ]) {
      execFileSync("ip", ["netns", "exec", namespace, "ip", ...args]);
    }
    // Its own crontabs (cron's spool, as Debian makes it: crontabs/ root's, group crontab, 1730),
    // so a crontab installed on one node is not another node's of the same user name.
    let cronSpool = "true";
    if (fs.existsSync("/var/spool/cron/crontabs")) {
      const crontabs = path.join(root, "cron", "crontabs");
      fs.mkdirSync(crontabs, { recursive: true });
      fs.chmodSync(path.join(root, "cron"), 0o755);
      const spool = fs.statSync("/var/spool/cron/crontabs");
      fs.chownSync(crontabs, 0, spool.gid);
      fs.chmodSync(crontabs, 0o1730);
      cronSpool = `mount --bind ${root}/cron /var/spool/cron`;
    }
    // The namespaces' holder: its own mount namespace with the /etc copy, then asleep.
    holder = spawn(
      "ip",
      ["netns", "exec", namespace, "unshare", "--mount", "--propagation", "private", "sh", "-c", `mount --bind ${root}/etc /etc && ${cronSpool} && echo ready && exec sleep infinity`],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((resolve, reject) => {
      holder!.stdout!.once("data", () => resolve());
      holder!.once("exit", (code) => reject(new Error(`the node's namespaces could not be made (exit ${code})`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  // nsenter starts in the namespace's root directory unless told where.
  const enter = (program: string, args: string[], cwd = process.cwd()) => ["-t", String(holder!.pid), "-m", "-n", `--wd=${cwd}`, "--", program, ...args];
  return {
    address,
    gateway,
    root,
    start: (program, args, options = {}) => spawn("nsenter", enter(program, args, options.cwd?.toString()), options),
    run(program, args) {
      try {
        const stdout = execFileSync("nsenter", enter(program, args), { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
        return { code: 0, stdout, stderr: "" };
      } catch (error) {
        const failed = error as { status?: number; stdout?: string; stderr?: string };
        return { code: failed.status ?? 1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
      }
    },
    stop,
  };
}
