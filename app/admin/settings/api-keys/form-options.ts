import type { Database } from "@/db/client";
import { ADMIN } from "@/lib/accounts/manager";
import { listManagedAccounts } from "@/lib/accounts/service";
import { operations } from "@/lib/http/registry";
import { endpointOf } from "@/lib/http/operation";
import { listResellers } from "@/lib/resellers/service";
import type { EndpointGroup } from "./api-key-form";

/** What the key form chooses from: the registry's operations by resource, resellers, accounts. */
export async function keyFormOptions(db: Database) {
  const groups = new Map<string, EndpointGroup>();
  for (const operation of operations) {
    const group = groups.get(operation.tag) ?? { tag: operation.tag, endpoints: [] };
    group.endpoints.push({ endpoint: endpointOf(operation), summary: operation.summary });
    groups.set(operation.tag, group);
  }
  const [resellers, accounts] = await Promise.all([listResellers(db), listManagedAccounts(db, ADMIN, {})]);
  return {
    endpointGroups: [...groups.values()],
    resellers: resellers.map(({ id, username }) => ({ id, username })),
    accounts: accounts.map(({ id, username }) => ({ id, username })),
  };
}
