import type { Queryable } from "@/db/client";
import { env } from "@/lib/env";
import { removeAccountHome, removeAccountSites, setAccountSitesSuspended } from "@/lib/hosting/service";
import { removeCertificate } from "@/lib/provisioning/acme";
import { mysqlProvisioner } from "@/lib/provisioning/mysql";
import { removeZoneFile } from "@/lib/provisioning/zone-files";
import { installAccountCrontab, removeAccountCrontab } from "@/lib/cron/service";
import { removeAccountLogins, setAccountLoginsSuspended } from "@/lib/ssh/service";

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
 * One kind of thing an account has on the real servers. Terminate and suspend walk the parts in
 * the list's order, so each step is named once and a failure says which one it was.
 */
export interface AccountServerPart {
  /** As an answer names it: "Could not remove the account's <name>". */
  name: string;
  /**
   * Removes all of it; safe to run again after a partial run (a repeated DELETE finishes). `tx`
   * is the terminating transaction, for parts that render from the records (the sites).
   */
  remove(holdings: AccountHoldings, tx: Queryable): Promise<void>;
  /** Applies (true) or lifts (false) a suspension; safe to run again. Left out: nothing to stop. */
  setSuspended?(holdings: AccountHoldings, suspended: boolean, tx: Queryable): Promise<void>;
}

async function eachInTurn(names: string[], act: (name: string) => Promise<void>) {
  for (const name of names) await act(name);
}

/**
 * In DESIGN.md's order of termination: sites and PHP pools, SFTP and SSH logins, cron jobs, certificates,
 * zone files, MariaDB databases and users, the system user, the home directory.
 */
export const accountServerParts: readonly AccountServerPart[] = [
  {
    name: "sites and PHP pools",
    remove: ({ accountId }, tx) => removeAccountSites(tx, accountId),
    // Suspended sites answer 503 with a short "suspended" page.
    setSuspended: ({ accountId }, suspended, tx) => setAccountSitesSuspended(tx, accountId, suspended),
  },
  {
    name: "SFTP and SSH logins",
    remove: ({ username }) => removeAccountLogins(username),
    // The Linux user expires, its keys file is emptied and its sessions end.
    setSuspended: ({ accountId, username }, suspended, tx) => setAccountLoginsSuspended(tx, accountId, username, suspended),
  },
  {
    name: "cron jobs",
    remove: ({ username }) => removeAccountCrontab(username),
    // Paused: the crontab holds no job until unsuspended (the expired user would be refused by cron's PAM anyway).
    setSuspended: ({ accountId }, suspended, tx) => installAccountCrontab(tx, accountId, suspended),
  },
  {
    name: "certificates",
    remove: ({ domains }) => eachInTurn(domains, (domain) => removeCertificate(env().certsDir, domain)),
  },
  {
    name: "zone files",
    remove: ({ domains }) => eachInTurn(domains, removeZoneFile),
  },
  {
    name: "MariaDB databases and users",
    async remove({ databases, databaseUsers }) {
      const server = mysqlProvisioner();
      if (!server) return;
      await eachInTurn(databaseUsers, (user) => server.dropUser(user));
      await eachInTurn(databases, (database) => server.dropDatabase(database));
    },
    // ACCOUNT LOCK refuses new logins; an unlocked user can log in again with its old password.
    async setSuspended({ databaseUsers }, suspended) {
      const server = mysqlProvisioner();
      if (server) await eachInTurn(databaseUsers, (user) => server.setUserLocked(user, suspended));
    },
  },
  {
    name: "system user and home directory",
    remove: ({ username }) => removeAccountHome(username),
  },
];
