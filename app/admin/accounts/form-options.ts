import type { Database } from "@/db/client";
import { listPlans } from "@/lib/plans/service";
import { listResellers } from "@/lib/resellers/service";

/** What the account forms choose from: plan names and reseller usernames. */
export async function accountFormOptions(db: Database) {
  const [plans, resellers] = await Promise.all([listPlans(db), listResellers(db)]);
  return { plans: plans.map((plan) => plan.name), resellers: resellers.map((reseller) => reseller.username) };
}
