import { z } from "zod";
import { idField, timestamp } from "@/lib/http/operation";
import { PRIVILEGES, type Privilege } from "@/lib/provisioning/rules";

export { PRIVILEGES, type Privilege };


const privilege = z
  .string()
  .transform((value) => value.trim().replace(/\s+/g, " ").toUpperCase())
  .pipe(z.enum(PRIVILEGES, { message: `must be one of: ${PRIVILEGES.join(", ")}` }));

const serverName = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .regex(/^[A-Za-z0-9_]+$/, "may contain only letters, digits and _");

export const createDatabaseBodySchema = z.object({ database_name: serverName(64) });

export const createDatabaseUserBodySchema = z.object({
  username: serverName(50),
  password: z.string().min(8, "must be at least 8 characters").max(128),
});

export const assignDatabaseBodySchema = z.object({
  database_id: idField,
  privileges: z.array(privilege).min(1).max(PRIVILEGES.length).optional(),
});


export const databaseRecordSchema = z.object({
  id: z.number().int(),
  database_name: z.string(),
  size_mb: z.number().nullable(),
  users: z.array(z.object({ id: z.number().int(), username: z.string(), privileges: z.array(z.string()) })),
  created_at: timestamp,
});

export const databaseUserRecordSchema = z.object({
  id: z.number().int(),
  username: z.string(),
  databases: z.array(
    z.object({ id: z.number().int(), database_name: z.string(), privileges: z.array(z.string()) }),
  ),
  created_at: timestamp,
});
