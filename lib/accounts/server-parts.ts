import { mysqlProvisioner } from "@/lib/provisioning/mysql";
import { removeZoneFile } from "@/lib/provisioning/zone-files";

/** What an account holds on the servers, read from its records: plain names, no database handle. */
export interface AccountHoldings {
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
  /** Removes all of it; safe to run again after a partial run (a repeated DELETE finishes). */
  remove(holdings: AccountHoldings): Promise<void>;
  /** Applies (true) or lifts (false) a suspension; safe to run again. Left out: nothing to stop. */
  setSuspended?(holdings: AccountHoldings, suspended: boolean): Promise<void>;
}

async function eachInTurn(names: string[], act: (name: string) => Promise<void>) {
  for (const name of names) await act(name);
}

/**
 * In DESIGN.md's order of termination: sites and PHP pools, certificates, zone files, MariaDB
 * databases and users, the system user, the home directory. Web hosting adds the sites part
 * first (its setSuspended serves the 503 "suspended" page), AutoSSL the certificates after it,
 * and the system user and home last.
 */
export const accountServerParts: readonly AccountServerPart[] = [
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
];
