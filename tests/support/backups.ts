import { execFileSync } from "node:child_process";
import path from "node:path";
import type { apiClient } from "./http";

// What the backup suites share: the panel's settings for homes with Linux users and a restic
// repository of the suite's own (no web server: restores need homes and users, not sites), a
// backup run through the API waited for, and commands run as an account's Linux user, as the
// customer runs them over SSH.

type Client = ReturnType<typeof apiClient>;

/** Homes with a Linux user per account under `root`, a repository and its password file there. */
export function backupPanelEnv(root: string, name: string, mysqlUrl?: string): Record<string, string> {
  return {
    SYSTEM_USERS: "1",
    HOME_ROOT: path.join(root, "home"),
    ACCESS_LOG_DIR: path.join(root, "logs"),
    LOGROTATE_CONFIG_FILE: path.join(root, "logrotate.conf"),
    BACKUP_REPOSITORY: path.join(root, `repository-${name}`),
    BACKUP_PASSWORD_FILE: path.join(root, `backup-password-${name}`),
    // Every run a test makes stays a restore point: retention (its own test) keeps one a day.
    BACKUP_KEEP_LAST: "1000",
    ...(mysqlUrl ? { MYSQL_PROVISION_URL: mysqlUrl } : {}),
  };
}

/**
 * A backup of the account now (POST answers 202 and goes on): the id of its restore point, once
 * it has ended well. While the run before still holds the repository (its retention runs after
 * its success is recorded) the POST answers 409 and is tried again.
 */
export async function backUp(admin: Client, accountId: number): Promise<string> {
  const runIds = async () => (await admin.get(`/api/admin/accounts/${accountId}/backups`)).body.snapshots.map((run: { id: string }) => run.id) as string[];
  const before = await runIds();
  let since = Date.now();
  let started = await admin.post(`/api/admin/accounts/${accountId}/backups`);
  for (let waited = 0; started.status === 409 && waited < 120_000; waited += 250) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    since = Date.now();
    started = await admin.post(`/api/admin/accounts/${accountId}/backups`);
  }
  if (started.status !== 202) throw new Error(`backup not started: ${started.status} ${JSON.stringify(started.body)}`);
  for (let waited = 0; waited < 120_000; waited += 250) {
    // Listed once complete (its records written), before retention runs.
    const made = (await runIds()).find((id) => !before.includes(id));
    if (made) return made;
    const status = (await admin.get("/api/admin/backups")).body.accounts.find((a: { account_id: number }) => a.account_id === accountId);
    if (status?.last_failure_at && Date.parse(status.last_failure_at) >= since) throw new Error(`backup failed: ${status.last_error}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error("the backup did not end within 120 s");
}

/** `program args…` as the account's Linux user (runuser, as the customer's own shell would), its output. */
export function asUser(username: string, program: string, args: string[], options: { cwd?: string } = {}): string {
  return execFileSync("runuser", ["-u", username, "--", program, ...args], { encoding: "utf8", cwd: options.cwd });
}
