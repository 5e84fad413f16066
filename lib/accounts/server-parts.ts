import type { Queryable } from "@/db/client";
import type { OperationName } from "@/lib/agent/operations";
import { accountCronLines } from "@/lib/cron/service";
import { accountMailStates } from "@/lib/email/service";
import { hostedAccounts, knownPhpVersions } from "@/lib/hosting/service";
import { removeZoneFile } from "@/lib/provisioning/zone-files";
import { accountKeys } from "@/lib/ssh/service";

/** What an account holds on the servers, read from its records: plain names, no database handle. */
export interface AccountHoldings {
  accountId: number;
  username: string;
  /** Every domain of the account (main, subdomains, parked). */
  domains: string[];
  /** Full server-side names, prefix included. */
  databases: string[];
  databaseUsers: string[];
}

/**
 * What one part needs done: an operation on the account's host (its machine: the panel's own or
 * a node, lib/nodes/hosts.ts), or work on the panel's own servers (the zone files, MariaDB).
 */
export type ServerStep = { on: "host"; op: OperationName; input: unknown } | { on: "panel"; run: () => Promise<void> };

/**
 * One kind of thing an account has on the real servers. Terminate and suspend walk the parts in
 * the list's order, so each step is named once and a failure says which one it was.
 */
export interface AccountServerPart {
  /** As an answer names it: "Could not remove the account's <name>". */
  name: string;
  /**
   * What removes all of it; safe to run again after a partial run (a repeated DELETE finishes).
   * `tx` is the terminating transaction, for parts that read the records.
   */
  removal(holdings: AccountHoldings, tx: Queryable): Promise<ServerStep>;
  /** What applies (true) or lifts (false) a suspension; safe to run again. Left out: nothing to stop. */
  suspension?(holdings: AccountHoldings, suspended: boolean, tx: Queryable): Promise<ServerStep>;
}

const onHost = (op: OperationName, input: unknown): ServerStep => ({ on: "host", op, input });

async function eachInTurn(names: string[], act: (name: string) => Promise<void>) {
  for (const name of names) await act(name);
}

/**
 * In DESIGN.md's order of termination: sites and PHP pools, SFTP and SSH logins, cron jobs, certificates,
 * zone files, MariaDB databases and users, mail, the system user, the home directory.
 */
export const accountServerParts: readonly AccountServerPart[] = [
  {
    name: "sites and PHP pools",
    removal: async ({ username, domains }, tx) => onHost("sites.remove", { username, domains, phpVersions: await knownPhpVersions(tx) }),
    // Suspended sites answer 503 with a short "suspended" page.
    async suspension({ accountId }, suspended, tx) {
      const account = (await hostedAccounts(tx, [accountId])).get(accountId)!;
      return onHost("sites.apply", { account: { ...account, suspended }, removedDomains: [], phpVersions: await knownPhpVersions(tx) });
    },
  },
  {
    name: "SFTP and SSH logins",
    removal: async ({ username }) => onHost("account.remove-logins", { username }),
    // The Linux user expires, its keys file is emptied and its sessions end.
    suspension: async ({ accountId, username }, suspended, tx) => onHost("account.logins-suspended", { username, keys: await accountKeys(tx, accountId), suspended }),
  },
  {
    name: "cron jobs",
    removal: async ({ username }) => onHost("account.remove-crontab", { username }),
    // Paused: the crontab holds no job until unsuspended (the expired user would be refused by cron's PAM anyway).
    suspension: async ({ accountId, username }, suspended, tx) => onHost("account.crontab", { username, jobs: await accountCronLines(tx, accountId), suspended }),
  },
  {
    name: "certificates",
    removal: async ({ domains }) => onHost("certificates.remove", { domains }),
  },
  {
    name: "zone files",
    removal: async ({ domains }) => ({ on: "panel", run: () => eachInTurn(domains, removeZoneFile) }),
  },
  {
    // The database server of the account's machine (its node's MYSQL_PROVISION_URL).
    name: "MariaDB databases and users",
    removal: async ({ databases, databaseUsers }) => onHost("databases.remove", { databases, users: databaseUsers }),
    // ACCOUNT LOCK refuses new logins; an unlocked user can log in again with its old password.
    suspension: async ({ databaseUsers }, suspended) => onHost("databases.lock", { users: databaseUsers, locked: suspended }),
  },
  {
    // Postfix's tables and Dovecot's passwd-file lose the account (its maildirs go with its home).
    name: "mail",
    removal: async ({ username }) => onHost("mail.remove", { username }),
    // Logins refused (nologin in the passwd-file), mail still received. Open sessions are not
    // ended yet (docs/email.md "Not there yet").
    async suspension({ accountId, username }, suspended, tx) {
      const mail = (await accountMailStates(tx, [accountId])).get(accountId)!;
      return onHost("mail.apply", { username, suspended, mail });
    },
  },
  {
    name: "system user and home directory",
    removal: async ({ username }) => onHost("account.remove-home", { username }),
  },
];
