import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { settings } from "@/db/schema";
import { env } from "@/lib/env";

const AUTH_SECRET_SETTING = "auth_secret";

/** AUTH_SECRET, or one generated on first use and kept in the database for every instance. */
export async function getAuthSecret(db: Database): Promise<string> {
  const configured = env().authSecret;
  if (configured) return configured;
  await db
    .insert(settings)
    .values({ key: AUTH_SECRET_SETTING, value: randomBytes(32).toString("base64url") })
    .onConflictDoNothing();
  const [row] = await db.select().from(settings).where(eq(settings.key, AUTH_SECRET_SETTING));
  return row.value;
}
