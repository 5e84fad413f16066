import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { freePort } from "./server";

// A private OpenSSH server for the file-access tests: its own host key, main configuration and
// port under `root`, including the drop-in the panel writes (SSHD_CONFIG_FILE) — never the
// machine's sshd. `env` is what the panel needs to manage it; the two login groups get names of
// their own, removed by stop() with the server.
// The main configuration is Debian's minus PAM (a container cannot write the login uid PAM asks
// for); without PAM sshd itself refuses an expired account, as PAM does on a server.

/**
 * A test's own root for homes that sshd can chroot into: sshd wants every directory above a
 * chroot to be root's and writable by nobody else, so not below /tmp (1777); under /var/lib.
 */
export function makeChrootableRoot(name: string): string {
  const root = fs.mkdtempSync(`/var/lib/panel-${name}-test-`);
  fs.chmodSync(root, 0o755);
  return root;
}

export interface SshServer {
  port: number;
  env: Record<string, string>;
  /** The keys directory (SSH_KEYS_DIR). */
  keysDir: string;
  stop(): Promise<void>;
}

export async function startSshServer(root: string): Promise<SshServer> {
  const port = await freePort();
  const dir = path.join(root, "sshd");
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  // sshd's privilege separation directory (made by systemd's tmpfiles on a server).
  fs.mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const hostKey = path.join(dir, "ssh_host_ed25519_key");
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", hostKey]);
  const dropIn = path.join(dir, "panel.conf");
  const keysDir = path.join(dir, "panel-keys");
  const config = path.join(dir, "sshd_config");
  fs.writeFileSync(
    config,
    [
      `Include ${dropIn}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${hostKey}`,
      `PidFile ${dir}/sshd.pid`,
      "UsePAM no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "Subsystem sftp internal-sftp",
      "",
    ].join("\n"),
  );
  // The panel writes the drop-in at its start; until then it is empty.
  fs.writeFileSync(dropIn, "");
  const child: ChildProcess = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", config, "-p", String(port)], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  await new Promise<void>((resolve, reject) => {
    const started = Date.now();
    const check = () => {
      if (output.includes("Server listening")) return resolve();
      if (child.exitCode !== null || Date.now() - started > 15_000) return reject(new Error(`sshd did not start:\n${output}`));
      setTimeout(check, 50);
    };
    check();
  });
  const suffix = randomBytes(3).toString("hex");
  const groups = { sftp: `pt-sftp-${suffix}`, shell: `pt-shell-${suffix}` };
  return {
    port,
    keysDir,
    env: {
      SSH_SERVER: "openssh",
      SSHD_CONFIG_FILE: dropIn,
      SSHD_TEST_COMMAND: `/usr/sbin/sshd -t -f ${config}`,
      SSHD_RELOAD_COMMAND: `kill -HUP ${child.pid}`,
      SSH_KEYS_DIR: keysDir,
      SSH_HOST: "127.0.0.1",
      SSH_PORT: String(port),
      SFTP_GROUP: groups.sftp,
      SHELL_GROUP: groups.shell,
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      for (const group of Object.values(groups)) spawnSync("groupdel", [group], { stdio: "ignore" });
    },
  };
}

/** An ed25519 key pair made by ssh-keygen in `dir`: the private key's path and the public line. */
export function makeKeyPair(dir: string, name: string, type = "ed25519", bits?: number): { privateKey: string; publicLine: string } {
  const privateKey = path.join(dir, name);
  execFileSync("ssh-keygen", ["-q", "-t", type, ...(bits ? ["-b", String(bits)] : []), "-N", "", "-C", `${name}@test`, "-f", privateKey]);
  return { privateKey, publicLine: fs.readFileSync(`${privateKey}.pub`, "utf8").trim() };
}

export interface SshResult {
  status: number;
  output: string;
}

const CLIENT_OPTIONS = ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "ConnectTimeout=10"];

/** How a client logs in: with a private key, or with a password (given through SSH_ASKPASS, as a person types it). */
export type Credentials = { privateKey: string } | { password: string; askpassDir: string };

function clientSetup(credentials: Credentials): { options: string[]; env: NodeJS.ProcessEnv } {
  if ("privateKey" in credentials) {
    return { options: [...CLIENT_OPTIONS, "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-i", credentials.privateKey], env: process.env };
  }
  const askpass = path.join(credentials.askpassDir, `askpass-${randomBytes(4).toString("hex")}`);
  fs.writeFileSync(askpass, `#!/bin/sh\nprintf '%s\\n' '${credentials.password.replace(/'/g, "'\\''")}'\n`, { mode: 0o700 });
  return {
    options: [...CLIENT_OPTIONS, "-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password", "-o", "NumberOfPasswordPrompts=1"],
    env: { ...process.env, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: "force", DISPLAY: "none" },
  };
}

/** `ssh user@127.0.0.1 command`: exit status 255 is "not let in". */
export function sshRun(port: number, username: string, credentials: Credentials, command: string): SshResult {
  const { options, env } = clientSetup(credentials);
  const result = spawnSync("ssh", [...options, "-p", String(port), `${username}@127.0.0.1`, command], { env, encoding: "utf8", timeout: 30_000, stdio: ["ignore", "pipe", "pipe"] });
  return { status: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}

/** `sftp` with `commands` on its standard input (not -b: batch mode would forbid a password). */
export function sftpRun(port: number, username: string, credentials: Credentials, commands: string[]): SshResult {
  const { options, env } = clientSetup(credentials);
  const result = spawnSync("sftp", [...options, "-P", String(port), `${username}@127.0.0.1`], {
    env,
    input: `${commands.join("\n")}\n`,
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}
