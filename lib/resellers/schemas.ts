import { z } from "zod";

/** The username rule in words: the schema's refusal ("must …") and the form's hint say it alike. */
export const RESELLER_USERNAME_RULE = "start with a letter, then letters, digits or _ only; at most 32 characters";

/** Create and rename (CLI, admin UI): the reseller's login name. */
export const resellerSchema = z.object({
  username: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z][a-z0-9_]{0,31}$/, `must ${RESELLER_USERNAME_RULE}`),
});
export type ResellerInput = z.input<typeof resellerSchema>;

export type ResellerRecord = { id: number; username: string; created_at: string };

/** A row of the admin list: the reseller and how many hosting accounts it owns. */
export type ResellerListRow = ResellerRecord & { account_count: number };
