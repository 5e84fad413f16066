import { and, eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { settings } from "@/db/schema";
import { randomBase62, sha256Hex } from "@/lib/api-keys/tokens";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import type { AdminRecord, CreateAdminInput } from "./schemas";
import { countAdminUsers, insertAdminUser } from "./service";

// A fresh install has no admin. Each start of such an install prints a one-time link; the page
// behind it (/setup) creates the first admin. Only the token's hash is kept; a new start
// replaces it, and creating the first admin deletes it.

export const SETUP_TOKEN_SETTING = "admin_setup_token_hash";

export async function announceAdminSetup(db: Database): Promise<string | null> {
  if ((await countAdminUsers(db)) > 0) return null;
  const token = randomBase62(32);
  await db
    .insert(settings)
    .values({ key: SETUP_TOKEN_SETTING, value: sha256Hex(token) })
    .onConflictDoUpdate({ target: settings.key, set: { value: sha256Hex(token) } });
  const link = `${env().publicUrl}/setup?token=${token}`;
  console.log(`\nNo admin exists yet. Create the first one here (one-time link):\n  ${link}\n`);
  return link;
}

export async function setupTokenIsValid(db: Database, token: string): Promise<boolean> {
  const [row] = await db.select().from(settings).where(eq(settings.key, SETUP_TOKEN_SETTING));
  return Boolean(row) && row.value === sha256Hex(token);
}

/** Creates the first admin through the one-time link; the link stops working at once. */
export async function completeAdminSetup(db: Database, token: string, input: CreateAdminInput): Promise<AdminRecord> {
  return db.transaction(async (tx) => {
    // Taking the token is the gate: of two set-ups sent at once, only one finds it. A refused
    // admin (bad email, short password) rolls the taking back, and the link still works.
    const [taken] = await tx
      .delete(settings)
      .where(and(eq(settings.key, SETUP_TOKEN_SETTING), eq(settings.value, sha256Hex(token))))
      .returning();
    if ((await countAdminUsers(tx)) > 0) throw new AppError("FORBIDDEN", "Set-up is already complete: sign in instead");
    if (!taken) throw new AppError("FORBIDDEN", "This set-up link is not valid (a newer one may have been printed)");
    return insertAdminUser(tx, input, { type: "system" });
  });
}
