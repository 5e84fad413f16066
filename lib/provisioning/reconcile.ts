import path from "node:path";
import { createHash } from "node:crypto";
import { env } from "@/lib/env";
import type { CronLine } from "./crontab";
import { letWebServerIn, prepareHome, webHostingEnabled } from "./home-layout";
import { applyAccountSites, applyAllSites, createDomainRoots, type HostedAccount } from "./hosting";
import { type AccountMail, applyAccountMail, applyAllMail } from "./mail";
import { LOGIN_SHELL, NO_LOGIN_SHELL, setLoginExpired, setLoginShell } from "./homes";
import { applyAllLogins, applyLoginAccess, createAccountUser, installAccountCrontab, setAccountQuota, setLoginsSuspended } from "./logins";
import type { AuthorizedKey } from "./openssh";
import { adoptLegacyUsers, linuxNameOwner, panelUsernames } from "./marks";
import { adoptDatabaseNames } from "./mysql";
import { quotaMountPoint } from "./quota";
import { readIfExists, writeAtomically } from "./system";

// A node brought in line with the panel's database (docs/nodes.md "How it works"): on every
// (re)connect of its agent the panel sends the whole state of every account the node hosts, and the
// node makes it so — users, homes, logins, crontabs, quotas, sites and pools — doing only what
// differs, so a reconcile of thousands of unchanged accounts costs reads, not thousands of programs
// run. One account's whole state is also how a node catches up with a change it took but did not
// answer in time (ensureAccount).

/** Everything the database says one account is on its node. */
export interface AccountState {
  account: HostedAccount;
  shell: boolean;
  diskMb: number | null;
  keys: AuthorizedKey[];
  cron: CronLine[];
  /** Its MariaDB databases and users: what a node marks once as the panel's (./marks.ts adoptLegacyUsers). */
  databases?: string[];
  databaseUsers?: string[];
  /** Its email (./mail.ts); left out by a panel from before email: the machine's mail is left as it is. */
  mail?: AccountMail;
}

/** One account made as its state says: missing parts made, the rest rewritten from the state. */
export async function ensureAccount(input: { state: AccountState; phpVersions: string[] }): Promise<void> {
  const { account, shell, diskMb, keys, cron } = input.state;
  const { username } = account;
  if (env().systemUsers) {
    // Another's user of this name (a service's) is refused by both (./marks.ts), never taken over.
    if ((await linuxNameOwner(username)) === "panel") await applyLoginAccess({ username, shell });
    else await createAccountUser({ username, shell, diskMb });
    await setAccountQuota({ username, diskMb });
  }
  await prepareHomeAndRoots(account);
  await applyAccountSites({ account, removedDomains: [], phpVersions: input.phpVersions });
  await setLoginsSuspended({ username, keys, suspended: account.suspended });
  await installAccountCrontab({ username, jobs: cron, suspended: account.suspended });
  if (input.state.mail) await applyAccountMail({ username, suspended: account.suspended, held: account.moving === true, mail: input.state.mail });
}

/** The account's home made ready, and every domain's document root in it (with web hosting). */
async function prepareHomeAndRoots(account: HostedAccount): Promise<void> {
  if (webHostingEnabled()) await createDomainRoots({ username: account.username, paths: account.domains.map((domain) => domain.path) });
  else await prepareHome(account.username);
}

/** How many accounts' homes a reconcile checks at once: file system calls wait on the disk, not the CPU. */
const HOMES_AT_ONCE = 8;

/** The login shell of each Linux user, by name (one read of /etc/passwd). */
async function passwdEntries(): Promise<Map<string, string>> {
  const text = (await readIfExists("/etc/passwd")) ?? "";
  return new Map(text.split("\n").filter(Boolean).map((line) => {
    const fields = line.split(":");
    return [fields[0], fields[6] ?? ""];
  }));
}

/** Whose logins have expired (the suspended: expiry day 1), by name (one read of /etc/shadow). */
async function expiredUsers(): Promise<Set<string>> {
  const text = (await readIfExists("/etc/shadow")) ?? "";
  return new Set(text.split("\n").filter((line) => line.split(":")[7] === "1").map((line) => line.split(":")[0]));
}

/** What this node last applied of the parts it cannot read back cheaply (crontabs, quotas), by account. */
const memoFile = () => path.join(env().dataDir, "node-applied.json");
type Memo = Record<string, { crontab?: string; quota?: number | null }>;
const digest = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("hex");

/**
 * Every account the node hosts, as the panel's database says. Missing Linux users and homes are
 * made; shells, expiry (suspension), crontabs and quotas changed only where they differ; keys
 * files, groups and the sshd drop-in written in one pass (applyAllLogins); every site and pool in
 * one nginx test (applyAllSites, which removes the sites of domains no longer listed). A failure
 * of one account is logged and the others go on.
 */
export async function reconcileAccounts(input: { accounts: AccountState[]; phpVersions: string[] }): Promise<{ failed: string[] }> {
  const started = performance.now();
  // Once per machine: what the panel made here before it marked its work (./marks.ts).
  await adoptLegacyUsers(
    input.accounts.map(({ account }) => account.username),
    () => adoptDatabaseNames(input.accounts.flatMap((state) => state.databases ?? []), input.accounts.flatMap((state) => state.databaseUsers ?? [])),
  ).catch((error) => console.error("[marks] what the panel made before its marks could not be marked yet:", (error as Error).message));
  const memo: Memo = JSON.parse((await readIfExists(memoFile())) ?? "{}");
  const quotas = env().systemUsers && Boolean(await quotaMountPoint());
  const [shells, expired, marked] = env().systemUsers
    ? await Promise.all([passwdEntries(), expiredUsers(), panelUsernames()])
    : [new Map<string, string>(), new Set<string>(), new Set<string>()];
  const failed = new Set<string>();
  const fail = (username: string, error: unknown) => {
    console.error(`[reconcile] ${username}:`, (error as Error).message);
    failed.add(username);
  };
  // Users one after another (useradd, usermod and gpasswd lock /etc/passwd and /etc/group), then
  // homes several at once.
  if (env().systemUsers) {
    for (const { account, shell, diskMb, cron } of input.accounts) {
      const { username } = account;
      const applied = (memo[username] ??= {});
      try {
        const loginShell = shell ? LOGIN_SHELL : NO_LOGIN_SHELL;
        // Another's user of this name is refused (createAccountUser), never taken over.
        if (!marked.has(username)) await createAccountUser({ username, shell, diskMb });
        else if (shells.get(username) !== loginShell) await setLoginShell(username, loginShell);
        if (expired.has(username) !== account.suspended) await setLoginExpired(username, account.suspended);
        if (quotas && applied.quota !== diskMb) {
          await setAccountQuota({ username, diskMb });
          applied.quota = diskMb;
        }
        const crontab = digest({ cron, suspended: account.suspended });
        if (applied.crontab !== crontab) {
          await installAccountCrontab({ username, jobs: cron, suspended: account.suspended });
          applied.crontab = crontab;
        }
        await letWebServerIn(username);
      } catch (error) {
        fail(username, error);
      }
    }
  }
  const usersReady = input.accounts.filter(({ account }) => !failed.has(account.username));
  for (let next = 0; next < usersReady.length; next += HOMES_AT_ONCE) {
    await Promise.all(usersReady.slice(next, next + HOMES_AT_ONCE).map(({ account }) => prepareHomeAndRoots(account).catch((error) => fail(account.username, error))));
  }
  const accountsDone = performance.now();
  await applyAllLogins(input.accounts.map(({ account, shell, keys }) => ({ username: account.username, shell, suspended: account.suspended, keys })));
  const loginsDone = performance.now();
  if (webHostingEnabled()) await applyAllSites(input.accounts.map((state) => state.account));
  if (input.accounts.every((state) => state.mail)) {
    await applyAllMail(input.accounts.map(({ account, mail }) => ({ username: account.username, suspended: account.suspended, held: account.moving === true, mail: mail! }))).catch((error) =>
      console.error("[reconcile] the mail tables could not be written:", (error as Error).message),
    );
  }
  const seconds = (from: number, to: number) => `${((to - from) / 1000).toFixed(1)} s`;
  const ended = performance.now();
  console.log(
    `[reconcile] ${input.accounts.length} accounts in ${seconds(started, ended)}: users and homes ${seconds(started, accountsDone)}, logins ${seconds(accountsDone, loginsDone)}, sites ${seconds(loginsDone, ended)}`,
  );
  const hosted = new Set(input.accounts.map((state) => state.account.username));
  for (const username of Object.keys(memo)) if (!hosted.has(username)) delete memo[username];
  await writeAtomically(memoFile(), JSON.stringify(memo), 0o600);
  return { failed: [...failed] };
}
