import fs from "node:fs/promises";
import path from "node:path";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { SSH_KEY_TYPES } from "./rules";
import { checkedAbsolutePath, checkedLinuxName, checkedString, refuseRenderedValue } from "./render-checks";
import { makeDirectories, readIfExists, runCommand, writeAtomically } from "./system";

// OpenSSH for the customers' SFTP and SSH (docs/files-and-ssh.md "How it is laid out, and why").
// Two kinds of file:
//   - one sshd drop-in, SSHD_CONFIG_FILE: rendered from the settings only (two groups and the
//     keys directory), so it changes when the admin changes those, never per account. Written,
//     tested with SSHD_TEST_COMMAND (the previous file is put back when sshd refuses it) and
//     reloaded with SSHD_RELOAD_COMMAND.
//   - the authorized keys of each account, SSH_KEYS_DIR/<username>, owned by root (group: the
//     account's, which reads it; mode 0640): the customer can read them, never change them.
//     sshd reads them at each login, so a key change needs no reload.
// Which accounts get a chroot is group membership (SFTP_GROUP: SFTP only, chrooted into the
// home; SHELL_GROUP: a real shell), set on the Linux users by lib/provisioning/homes.ts.

export interface SshdSettings {
  sftpGroup: string;
  shellGroup: string;
  keysDir: string;
}

const RENDERER = "sshd drop-in";

/** The drop-in: both groups read their keys from SSH_KEYS_DIR; SFTP_GROUP is chrooted into the home and can only run SFTP. */
export function renderSshdConfig(settings: SshdSettings): string {
  const sftpGroup = checkedLinuxName(RENDERER, "SFTP group", settings.sftpGroup);
  const shellGroup = checkedLinuxName(RENDERER, "shell group", settings.shellGroup);
  const keysDir = checkedAbsolutePath(RENDERER, "keys directory", settings.keysDir);
  // Nothing of the customer's reaches the server through the connection but files and commands:
  // no forwarding of ports, agents, X11 or tunnels (MariaDB and the panel listen on 127.0.0.1).
  const common = [
    `    AuthorizedKeysFile ${keysDir}/%u`,
    "    PasswordAuthentication yes",
    "    PubkeyAuthentication yes",
    "    AllowTcpForwarding no",
    "    AllowStreamLocalForwarding no",
    "    AllowAgentForwarding no",
    "    X11Forwarding no",
    "    PermitTunnel no",
    "    GatewayPorts no",
    "    PermitUserRC no",
  ];
  return [
    "# Written by the hosting panel (SSH_SERVER=openssh): customers' SFTP and SSH. Edit through the",
    "# panel's settings; this file is rewritten at its start.",
    `Match Group ${shellGroup}`,
    ...common,
    `Match Group ${sftpGroup}`,
    ...common,
    // sshd checks that the home and every directory above it belong to root and are writable by
    // nobody else (HOME_ROOT/<user> is root:<user> 0750, lib/provisioning/homes.ts).
    "    ChrootDirectory %h",
    "    ForceCommand internal-sftp",
    // The Match blocks end here: whatever the main file has after its Include stays global.
    "Match all",
    "",
  ].join("\n");
}

/**
 * Writes the drop-in when it differs from the file there, has sshd test the whole configuration
 * and reloads it. A refused configuration puts the previous file back (or removes the new one)
 * and throws 422 (sshd's complaint goes to the panel's log). Returns whether the file changed.
 */
export async function applySshdConfig(contents: string): Promise<boolean> {
  const ssh = env().ssh!;
  const previous = await readIfExists(ssh.configFile);
  if (previous === contents) return false;
  await writeAtomically(ssh.configFile, contents);
  const refusal = await runCommand(ssh.testCommand);
  if (refusal) {
    if (previous === null) await fs.rm(ssh.configFile, { force: true });
    else await writeAtomically(ssh.configFile, previous);
    console.error(`[ssh] sshd refused the new configuration: ${refusal}`);
    throw new AppError("VALIDATION", "sshd refused the new configuration; the previous one stays (the panel's log says why)");
  }
  const reloadError = await runCommand(ssh.reloadCommand);
  if (reloadError) console.error(`[ssh] the drop-in was written, but the reload failed: ${reloadError}`);
  return true;
}

/** One stored key as it is written: its type and blob (the name stays in the database). */
export interface AuthorizedKey {
  id: number;
  type: string;
  data: string;
}

const KEYS_RENDERER = "authorized keys file";
/** Canonical base64: whole groups of four, padding only at the end. */
const KEY_DATA = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)$/;

/** The account's authorized_keys: one bare line per key, none while the account is suspended. */
export function renderAuthorizedKeys(keys: AuthorizedKey[], suspended: boolean): string {
  const lines = ["# Written by the hosting panel from its database: manage keys through the panel's API."];
  if (suspended) lines.push("# The account is suspended: no key is accepted.");
  else {
    for (const key of keys) {
      if (!(SSH_KEY_TYPES as readonly string[]).includes(key.type)) refuseRenderedValue(KEYS_RENDERER, "key type", key.type, "not a key type the panel accepts");
      const data = checkedString(KEYS_RENDERER, "key data", key.data, KEY_DATA, "key data is base64");
      lines.push(`${key.type} ${data} panel-key-${key.id}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** SSH_KEYS_DIR/<username> (the name checked first: it is a path). */
export function keysFilePath(username: string): string {
  return path.join(env().ssh!.keysDir, checkedLinuxName(KEYS_RENDERER, "username", username));
}

/**
 * Writes the account's keys file when it differs: root's, readable by the account's group
 * (`gid`), 0640. SSH_KEYS_DIR is root's own directory (0755), never inside a home.
 */
export async function writeAuthorizedKeys(username: string, gid: number, contents: string): Promise<void> {
  const file = keysFilePath(username);
  if ((await readIfExists(file)) === contents) return;
  // sshd reads the file as the account's user: the directory must let everyone through.
  await makeDirectories(path.dirname(file), 0o755);
  await writeAtomically(file, contents, 0o640, { uid: 0, gid });
}

export async function removeAuthorizedKeys(username: string): Promise<void> {
  await fs.rm(keysFilePath(username), { force: true });
}

/** The usernames that have a keys file (start-up removes those of accounts that are gone). */
export async function keysFileUsernames(): Promise<string[]> {
  return (await fs.readdir(env().ssh!.keysDir).catch(() => [] as string[])).filter((name) => !name.startsWith("."));
}
