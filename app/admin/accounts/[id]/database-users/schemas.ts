import { z } from "zod";
import { assignDatabaseBodySchema } from "@/lib/databases/schemas";

/**
 * "Give access" on a database user's page: assign-database's fields, privileges always chosen
 * (the form starts on ALL PRIVILEGES, what the API takes when they are left out).
 */
export const grantFormSchema = assignDatabaseBodySchema.required({ privileges: true });
export type GrantFormInput = z.input<typeof grantFormSchema>;
