import { z } from "zod";
import { assignDatabaseBodySchema, PRIVILEGES } from "@/lib/databases/schemas";

/**
 * "Give access" on a database user's page: assign-database's fields, with at least one privilege
 * always chosen (the form starts on ALL PRIVILEGES, what the API takes when they are left out).
 */
export const grantFormSchema = assignDatabaseBodySchema.extend({
  privileges: z.array(assignDatabaseBodySchema.shape.privileges.unwrap().element).min(1, "must have at least one chosen").max(PRIVILEGES.length),
});
export type GrantFormInput = z.input<typeof grantFormSchema>;
