import type { Database } from "@/db/client";
import { createAccount } from "@/lib/accounts/service";
import { createAdminUser } from "@/lib/admins/service";
import { createApiKey } from "@/lib/api-keys/service";
import type { CreateApiKeyInput } from "@/lib/api-keys/schemas";
import type { Actor } from "@/lib/audit/service";
import { createReseller } from "@/lib/resellers/service";
import type { Credentials } from "./http";

export const seedActor: Actor = { type: "system" };

/** A key made by `actor` (default: the panel itself, so an admin key belongs to no admin; an admin actor owns theirs). */
export async function makeKey(db: Database, input: Partial<CreateApiKeyInput> & Pick<CreateApiKeyInput, "scope">, actor: Actor = seedActor) {
  const created = await createApiKey(db, { name: `test ${input.scope} key`, ...input }, actor);
  return { id: created.id, key: created.key, secret: created.secret } satisfies Credentials & { id: number };
}

/**
 * The usual cast: an admin, a reseller owning `alice`, an independent `bob`, and a key of
 * each scope.
 */
export async function seedTenants(db: Database) {
  const admin = await createAdminUser(db, { email: "admin@example.com", password: "correct horse battery" }, seedActor);
  const reseller = await createReseller(db, { username: "res1" }, seedActor);
  const alice = await createAccount(db, { username: "alice", domain: "alice.example", reseller: "res1" }, seedActor);
  const bob = await createAccount(db, { username: "bob", domain: "bob.example" }, seedActor);
  return {
    admin,
    reseller,
    alice,
    bob,
    adminKey: await makeKey(db, { scope: "admin" }),
    resellerKey: await makeKey(db, { scope: "reseller", reseller_id: reseller.id }),
    aliceKey: await makeKey(db, { scope: "account", account_id: alice.id }),
    bobKey: await makeKey(db, { scope: "account", account_id: bob.id }),
  };
}
