import fs from "node:fs/promises";
import { checkedAbsolutePath, checkedString } from "./render-checks";
import { readIfExists, runCommand, writeAtomically } from "./system";

// The NATS server's authorization (docs/nodes.md "Security"): one NKEY user for the panel
// (everything) and one per enrolled node, allowed only that node's subjects. Rendered from the
// panel's database into NATS_AUTH_FILE, which the administrator's nats-server.conf includes, and
// reloaded with NATS_RELOAD_COMMAND — as nginx's sites are. On a reload the server closes the
// connections of users no longer listed: revoking a node ends its session at once.

const RENDERER = "NATS authorization";

export interface NatsUser {
  /** The NKEY's public key ("U…"). */
  publicKey: string;
  /** Subjects it may publish to and subscribe to; null: every subject (the panel). */
  permissions: { publish: string[]; subscribe: string[] } | null;
  /** Who it is, for a reader of the file (a node's name, "panel"). */
  comment: string;
}

const PUBLIC_KEY = /^U[A-Z2-7]{55}$/;
// Subjects of the protocol: tokens of letters, digits, `_ - $`, dots between, `>` last.
const SUBJECT = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*(\.>)?$/;
const COMMENT = /^[a-z0-9][a-z0-9-]{0,30}$/;

const quotedList = (subjects: string[], kind: string) =>
  `[${subjects.map((subject) => JSON.stringify(checkedString(RENDERER, kind, subject, SUBJECT, "a NATS subject of tokens"))).join(", ")}]`;

/** The authorization block (pure: values checked again here, render-checks.ts). */
export function renderNatsAuthorization(users: NatsUser[]): string {
  const lines = ["# Written by the hosting panel from its database (nodes): do not edit.", "authorization {", "  users = ["];
  for (const user of users) {
    const key = checkedString(RENDERER, "NKEY", user.publicKey, PUBLIC_KEY, "an NKEY user's public key");
    const comment = checkedString(RENDERER, "user name", user.comment, COMMENT, "a node name");
    lines.push(`    # ${comment}`);
    if (!user.permissions) {
      lines.push(`    { nkey: "${key}" }`);
      continue;
    }
    lines.push(
      `    { nkey: "${key}", permissions: {`,
      `        publish: { allow: ${quotedList(user.permissions.publish, "subject")} }`,
      `        subscribe: { allow: ${quotedList(user.permissions.subscribe, "subject")} }`,
      "    } }",
    );
  }
  lines.push("  ]", "}", "");
  return lines.join("\n");
}

/**
 * Writes the authorization file and reloads the server when it changed. Resolves with why the
 * reload failed, or null. The file names every node's key: 0600, or 0640 for the group the
 * administrator gave it (the NATS server's user reads it: Debian's unit runs as `nats`).
 */
export async function applyNatsAuthorization(file: string, users: NatsUser[], reloadCommand: string | null): Promise<string | null> {
  const contents = renderNatsAuthorization(users);
  checkedAbsolutePath(RENDERER, "file", file);
  if ((await readIfExists(file)) === contents) return null;
  const group = (await fs.stat(file).catch(() => null))?.gid ?? 0;
  if (group === 0 || group === process.getegid?.()) await writeAtomically(file, contents, 0o600);
  else await writeAtomically(file, contents, 0o640, { uid: process.geteuid!(), gid: group });
  return reloadCommand ? runCommand(reloadCommand, {}, 15_000) : null;
}
