import { z } from "zod";
import { idField, timestamp } from "@/lib/http/operation";

/** MySQL privilege names a database user may be granted (DESIGN.md "Records"). */
export const PRIVILEGES = [
  "ALL PRIVILEGES",
  "ALTER",
  "ALTER ROUTINE",
  "CREATE",
  "CREATE ROUTINE",
  "CREATE TEMPORARY TABLES",
  "CREATE VIEW",
  "DELETE",
  "DROP",
  "EVENT",
  "EXECUTE",
  "INDEX",
  "INSERT",
  "LOCK TABLES",
  "REFERENCES",
  "SELECT",
  "SHOW VIEW",
  "TRIGGER",
  "UPDATE",
] as const;
export type Privilege = (typeof PRIVILEGES)[number];

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
