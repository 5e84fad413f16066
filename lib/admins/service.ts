import { asc, count, eq, ilike, or, sql } from "drizzle-orm";
import type { Database, Queryable, Transaction } from "@/db/client";
import { adminUsers } from "@/db/schema";
import { type Actor, recordAudit } from "@/lib/audit/service";
import { notFound, pgErrorCode, validationError } from "@/lib/errors";
import { containsPattern, type ListPage, type ListQuery, listQuerySchema, paged } from "@/lib/list-query";
import { hashPassword, verifyPassword } from "./password";
import {
  type AdminRecord,
  type ChangeOwnPasswordInput,
  type CreateAdminInput,
  changeOwnPasswordSchema,
  createAdminSchema,
  type SetPasswordInput,
  setPasswordSchema,
} from "./schemas";

export const toAdminRecord = (row: typeof adminUsers.$inferSelect): AdminRecord => ({
  id: row.id,
  email: row.email,
  name: row.name,
  is_enabled: row.isEnabled,
  two_factor: row.totpSecret !== null,
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
  return toAdminRecord(row);
}

export async function countAdminUsers(db: Queryable): Promise<number> {
  const [{ total }] = await db.select({ total: count() }).from(adminUsers);
  return total;
}

export async function findAdminByEmail(db: Queryable, email: string) {
  const [row] = await db.select().from(adminUsers).where(eq(adminUsers.email, email.trim().toLowerCase()));
  return row ?? null;
}

export async function listAdminUsers(db: Queryable): Promise<AdminRecord[]> {
  return (await db.select().from(adminUsers).orderBy(asc(adminUsers.id))).map(toAdminRecord);
}

/** The admins page's list: searched by email or name, paged. */
export async function listAdminUsersPage(db: Queryable, query: ListQuery): Promise<ListPage<AdminRecord>> {
  const { search, ...window } = listQuerySchema.parse(query);
  const where = search ? or(ilike(adminUsers.email, containsPattern(search)), ilike(adminUsers.name, containsPattern(search))) : undefined;
  const rowsQuery = db.select().from(adminUsers).where(where).orderBy(asc(adminUsers.email)).$dynamic();
  const [rows, [{ total }]] = await Promise.all([paged(rowsQuery, window), db.select({ total: count() }).from(adminUsers).where(where)]);
  return { rows: rows.map(toAdminRecord), total };
}

export async function getAdminUser(db: Queryable, id: number): Promise<AdminRecord> {
  const [row] = await db.select().from(adminUsers).where(eq(adminUsers.id, id));
  if (!row) throw notFound("Admin");
  return toAdminRecord(row);
}

/**
 * Disables or enables an admin. Disabling ends their sessions at once and for good, and is refused
 * for the last enabled admin, who would lock everyone out: the enabled rows are locked first, so
 * two admins disabling each other cannot both succeed.
 */
export async function setAdminEnabled(db: Database, id: number, enabled: boolean, actor: Actor): Promise<AdminRecord> {
  return db.transaction(async (tx) => {
    const enabledIds = (await tx.select({ id: adminUsers.id }).from(adminUsers).where(eq(adminUsers.isEnabled, true)).for("update")).map(
      (row) => row.id,
    );
    if (!enabled && enabledIds.length === 1 && enabledIds[0] === id) {
      throw validationError("is_enabled", "cannot be turned off for the last enabled admin");
    }
    // Disabling also moves the session generation, so enabling again does not revive old sessions.
    const sessionGeneration = enabled ? adminUsers.sessionGeneration : sql`${adminUsers.sessionGeneration} + 1`;
    const [row] = await tx.update(adminUsers).set({ isEnabled: enabled, sessionGeneration }).where(eq(adminUsers.id, id)).returning();
    if (!row) throw notFound("Admin");
    await recordAudit(tx, actor, { action: enabled ? "admin_user.enable" : "admin_user.disable", targetType: "admin_user", targetId: id });
    return toAdminRecord(row);
  });
}

/** Sets an admin's password (another admin's reset, or the CLI) and ends all their sessions. */
export async function setAdminPassword(db: Database, id: number, input: SetPasswordInput, actor: Actor): Promise<AdminRecord> {
  const { password } = setPasswordSchema.parse(input);
  return toAdminRecord(await db.transaction((tx) => writePassword(tx, id, password, actor)));
}

/**
 * An admin's own password change, proven by the current one. Ends all their sessions; the
 * caller issues the admin a new one for the answered session generation.
 */
export async function changeOwnPassword(db: Database, id: number, input: ChangeOwnPasswordInput) {
  const fields = changeOwnPasswordSchema.parse(input);
  const row = await db.transaction(async (tx) => {
    const [admin] = await tx.select().from(adminUsers).where(eq(adminUsers.id, id)).for("update");
    if (!admin) throw notFound("Admin");
    if (!(await verifyPassword(fields.current_password, admin.passwordHash))) throw validationError("current_password", "is not correct");
    return writePassword(tx, id, fields.password, { type: "admin_user", id });
  });
  return { id: row.id, email: row.email, name: row.name, sessionGeneration: row.sessionGeneration };
}

async function writePassword(tx: Transaction, id: number, password: string, actor: Actor) {
  const [row] = await tx
    .update(adminUsers)
    .set({ passwordHash: await hashPassword(password), sessionGeneration: sql`${adminUsers.sessionGeneration} + 1` })
    .where(eq(adminUsers.id, id))
    .returning();
  if (!row) throw notFound("Admin");
  await recordAudit(tx, actor, { action: "admin_user.password", targetType: "admin_user", targetId: id });
  return row;
}

/** Sign-out: every session of this admin ends (a session token cannot be revoked alone). */
export async function endAdminSessions(db: Database, id: number): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.update(adminUsers).set({ sessionGeneration: sql`${adminUsers.sessionGeneration} + 1` }).where(eq(adminUsers.id, id));
    await recordAudit(tx, { type: "admin_user", id }, { action: "admin_user.sign_out", targetType: "admin_user", targetId: id });
  });
}
