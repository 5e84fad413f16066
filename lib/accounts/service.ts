import { asc, eq } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { DEFAULT_PLAN_NAME } from "@/db/prepare";
import { hostingAccounts, plans } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { normalizeDomainName } from "@/lib/domains/names";
import { insertDomainWithZone } from "@/lib/domains/service";
import { notFound, pgErrorCode, validationError } from "@/lib/errors";
import { findPlanByName, toPlanRecord } from "@/lib/plans/service";
import { findResellerByUsername } from "@/lib/resellers/service";
import { type CreateAccountInput, createAccountSchema, type HostingAccountRecord } from "./schemas";

export function toAccountRecord(
  account: typeof hostingAccounts.$inferSelect,
  plan: typeof plans.$inferSelect,
): HostingAccountRecord {
  return {
    id: account.id,
    username: account.username,
    domain: account.domain,
    email: account.email,
    name: account.name,
    phone: account.phone,
    address: account.address,
    city: account.city,
    state: account.state,
    zip: account.zip,
    country: account.country,
    company: account.company,
    is_auto_ssl_enabled: account.isAutoSslEnabled,
    status: account.status,
    is_suspended: account.status === "suspended",
    has_ssh_access: account.hasSshAccess,
    plan: toPlanRecord(plan),
    reseller_id: account.resellerId,
    created_at: account.createdAt.toISOString(),
    updated_at: account.updatedAt.toISOString(),
  };
}

function selectAccounts(db: Queryable) {
  return db.select().from(hostingAccounts).innerJoin(plans, eq(plans.id, hostingAccounts.planId));
}

export async function getAccount(db: Queryable, accountId: number): Promise<HostingAccountRecord> {
  const [row] = await selectAccounts(db).where(eq(hostingAccounts.id, accountId));
  if (!row) throw notFound("Hosting account");
  return toAccountRecord(row.hosting_accounts, row.plans);
}

export async function listAccounts(db: Queryable): Promise<HostingAccountRecord[]> {
  const rows = await selectAccounts(db).orderBy(asc(hostingAccounts.username));
  return rows.map((row) => toAccountRecord(row.hosting_accounts, row.plans));
}

/** Creates an account with its main domain (type `domain`) and that domain's zone, atomically. */
export async function createAccount(
  db: Database,
  input: CreateAccountInput,
  actor: Actor,
): Promise<HostingAccountRecord> {
  const fields = createAccountSchema.parse(input);
  const domain = normalizeDomainName(fields.domain);
  if (!domain) throw validationError("domain", "is not a valid domain name");
  const id = await db.transaction(async (tx) => {
    const plan = await findPlanByName(tx, fields.plan ?? DEFAULT_PLAN_NAME);
    if (!plan) throw validationError("plan", `names no plan ("${fields.plan}")`);
    const reseller = fields.reseller ? await findResellerByUsername(tx, fields.reseller) : null;
    if (fields.reseller && !reseller) throw validationError("reseller", `names no reseller ("${fields.reseller}")`);
    let account: typeof hostingAccounts.$inferSelect;
    try {
      [account] = await tx
        .insert(hostingAccounts)
        .values({
          username: fields.username,
          domain,
          email: fields.email ?? null,
          planId: plan.id,
          resellerId: reseller?.id ?? null,
        })
        .returning();
    } catch (error) {
      if (pgErrorCode(error) === "23505") throw validationError("username", "is already taken");
      throw error;
    }
    await insertDomainWithZone(tx, {
      accountId: account.id,
      domain,
      domainType: "domain",
      domainPath: "public_html",
    });
    await recordAudit(tx, actor, {
      action: "hosting_account.create",
      targetType: "hosting_account",
      targetId: account.id,
      details: { username: account.username, domain },
    });
    return account.id;
  });
  return getAccount(db, id);
}

export async function findAccountIdByUsername(db: Queryable, username: string): Promise<number | null> {
  const [row] = await db
    .select({ id: hostingAccounts.id })
    .from(hostingAccounts)
    .where(eq(hostingAccounts.username, username.trim().toLowerCase()));
  return row?.id ?? null;
}
