import fs from "node:fs/promises";
import path from "node:path";
import { env, liesWithin } from "@/lib/env";
import { checkedAbsolutePath } from "./render-checks";
import { readIfExists } from "./system";

// Rotation of the logs in the accounts' homes (docs/applications.md "Logs"): one logrotate rule file,
// LOGROTATE_CONFIG_FILE (/etc/logrotate.d/hosting-panel on a server: Debian's logrotate runs it
// daily), written at start from HOME_ROOT. `copytruncate`: nginx's master, PHP and cron keep
// writing the same files — no reopen signal to send, and the account's processes need no right
// to make a new file in logs/, which is root's.

const RENDERER = "logrotate rules";

/** The rules for every home's logs/: access and error logs, PHP's errors, cron's output. */
export function renderLogrotateRules(homeRoot: string): string {
  const logs = path.posix.join(checkedAbsolutePath(RENDERER, "home root", homeRoot), "*", "logs");
  return [
    "# Written by the hosting panel at start (LOGROTATE_CONFIG_FILE): the logs in the accounts' homes.",
    `${logs}/*.log {`,
    "    daily",
    "    rotate 14",
    "    maxsize 100M",
    "    missingok",
    "    notifempty",
    "    compress",
    "    delaycompress",
    "    copytruncate",
    "}",
    "",
  ].join("\n");
}

/**
 * Writes the rules when they differ from the file's, root's and never writable by others
 * (logrotate ignores such a file): in DATA_DIR (the default) 0600 like everything there, elsewhere
 * (/etc/logrotate.d) 0644 as Debian's own rules.
 */
export async function writeLogrotateRules(): Promise<void> {
  const { logrotateConfigFile, homeRoot, dataDir } = env();
  const rules = renderLogrotateRules(homeRoot);
  const mode = liesWithin(logrotateConfigFile, dataDir) ? 0o600 : 0o644;
  const existing = await fs.stat(logrotateConfigFile).catch(() => null);
  if (existing && (existing.mode & 0o777) === mode && (await readIfExists(logrotateConfigFile)) === rules) return;
  await fs.mkdir(path.dirname(logrotateConfigFile), { recursive: true });
  const temporary = `${logrotateConfigFile}.tmp`;
  await fs.writeFile(temporary, rules);
  await fs.chmod(temporary, mode); // explicitly: the panel's umask is 0077
  await fs.rename(temporary, logrotateConfigFile);
}
