import type { Database } from "@/db/client";
import { ADMIN } from "@/lib/accounts/manager";
import { listManagedAccounts } from "@/lib/accounts/service";
import { listApiKeyNames } from "@/lib/api-keys/service";
import { listResellers } from "@/lib/resellers/service";

/** What the key form chooses from (the endpoints come from the registry itself): resellers, accounts, and the names in use. */
export async function keyFormOptions(db: Database) {
  const [resellers, accounts, keyNames] = await Promise.all([listResellers(db), listManagedAccounts(db, ADMIN, {}), listApiKeyNames(db)]);
  return {
    resellers: resellers.map(({ id, username }) => ({ id, username })),
    accounts: accounts.map(({ id, username }) => ({ id, username })),
    keyNames,
  };
}
