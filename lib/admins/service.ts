import { asc, count, eq } from "drizzle-orm";
import type { Database, Queryable, Transaction } from "@/db/client";
import { adminUsers } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { pgErrorCode, validationError } from "@/lib/errors";
import { hashPassword } from "./password";
import { type AdminRecord, type CreateAdminInput, createAdminSchema } from "./schemas";

const toRecord = (row: typeof adminUsers.$inferSelect): AdminRecord => ({
  id: row.id,
  email: row.email,
  name: row.name,
  created_at: row.createdAt.toISOString(),
});

export async function createAdminUser(db: Database, input: CreateAdminInput, actor: Actor): Promise<AdminRecord> {
  return db.transaction((tx) => insertAdminUser(tx, input, actor));
}

/** Creates an admin inside the caller's transaction; an email already in use → 422 at `email`. */
export async function insertAdminUser(tx: Transaction, input: CreateAdminInput, actor: Actor): Promise<AdminRecord> {
  const fields = createAdminSchema.parse(input);
  const passwordHash = await hashPassword(fields.password);
  let row: typeof adminUsers.$inferSelect;
  try {
    [row] = await tx.insert(adminUsers).values({ email: fields.email, name: fields.name, passwordHash }).returning();
  } catch (error) {
    if (pgErrorCode(error) === "23505") throw validationError("email", "is already an admin");
    throw error;
  }
  await recordAudit(tx, actor, { action: "admin_user.create", targetType: "admin_user", targetId: row.id });
  return toRecord(row);
}

export async function countAdminUsers(db: Queryable): Promise<number> {
  const [{ total }] = await db.select({ total: count() }).from(adminUsers);
  return total;
}

/** The first admin: owner of keys made on the command line (SSO signs in as this admin). */
export async function firstAdminUser(db: Queryable) {
  const [row] = await db.select().from(adminUsers).orderBy(asc(adminUsers.id)).limit(1);
  return row ?? null;
}

export async function findAdminByEmail(db: Queryable, email: string) {
  const [row] = await db.select().from(adminUsers).where(eq(adminUsers.email, email.trim().toLowerCase()));
  return row ?? null;
}
