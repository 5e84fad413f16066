import { eq } from "drizzle-orm";
import { plans } from "@/db/schema";
import type { Connection } from "./client";

export const DEFAULT_PLAN_NAME = "default";

/** Applies pending migrations and the rows every install has (the unlimited `default` plan). */
export async function prepareDatabase(connection: Connection): Promise<void> {
  await connection.migrate();
  const [plan] = await connection.db.select({ id: plans.id }).from(plans).where(eq(plans.name, DEFAULT_PLAN_NAME));
  if (!plan) await connection.db.insert(plans).values({ name: DEFAULT_PLAN_NAME }).onConflictDoNothing();
}
