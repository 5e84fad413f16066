import { eq, type SQL } from "drizzle-orm";
import { hostingAccounts } from "@/db/schema";
import type { Principal } from "@/lib/auth/authenticate";

/**
 * Who manages accounts, and so which ones it reaches: an admin (the admin UI, the command line,
 * admin API keys) every account, a reseller (its API keys) only its own. Services answer "not
 * found" for an account outside the manager's set, exactly as for one that does not exist.
 */
export type AccountManager = { kind: "admin" } | { kind: "reseller"; resellerId: number };

export const ADMIN: AccountManager = { kind: "admin" };

/** The manager behind an API key of the account lifecycle operations (admin or reseller scope). */
export function managerOf(principal: Principal): AccountManager {
  if (principal.scope === "reseller" && principal.resellerId !== null) {
    return { kind: "reseller", resellerId: principal.resellerId };
  }
  if (principal.scope === "admin") return ADMIN;
  // authenticate() lets only admin and reseller keys reach these operations.
  throw new Error(`a ${principal.scope} key cannot manage accounts`);
}

/** The WHERE condition "the manager reaches this account" (undefined: every account). */
export function managedBy(manager: AccountManager): SQL | undefined {
  return manager.kind === "admin" ? undefined : eq(hostingAccounts.resellerId, manager.resellerId);
}
