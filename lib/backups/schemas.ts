import { z } from "zod";
import { hostingAccountSchema } from "@/lib/accounts/schemas";
import { timestamp } from "@/lib/http/operation";

// Backups (DESIGN.md "Backups (restic)").

export const backupStatusSchema = z.object({
  accounts: z.array(
    z.object({
      account_id: z.number().int(),
      username: z.string(),
      last_success_at: timestamp.nullable(),
      last_failure_at: timestamp.nullable(),
      /** The error of the last run, when it failed. */
      last_error: z.string().nullable(),
      snapshots: z.number().int(),
      size_bytes: z.number().int(),
    }),
  ),
});

/** One account's line of the backup status. */
export type AccountBackupStatus = z.infer<typeof backupStatusSchema>["accounts"][number];

export const backupRunSchema = z.object({
  id: z.string(),
  time: z.string(),
  size_bytes: z.number().int().nullable(),
  databases: z.array(z.string()),
});

export const backupRunListSchema = z.object({ snapshots: z.array(backupRunSchema) });

const relativePath = z.string().min(1).max(4096);
const databaseName = z.string().min(1).max(64);

/**
 * `into`: restore the database under another name of the account's (made when it does not
 * exist); `to`: restore the path beside its place, at a path of the home that does not exist.
 */
const restoreTarget = {
  database: databaseName.optional(),
  into: databaseName.optional(),
  path: relativePath.optional(),
  to: relativePath.optional(),
};
const intoGoesWithDatabase = (body: { database?: string; into?: string }) => !body.into || Boolean(body.database);
const intoWithoutDatabase = { message: "goes with database", path: ["into"] };
const toGoesWithPath = (body: { path?: string; to?: string }) => !body.to || Boolean(body.path);
const toWithoutPath = { message: "goes with path", path: ["to"] };

/** POST /api/admin/accounts/{id}/restore: one database, one path, or (neither) the home and every database. */
export const restoreBodySchema = z
  .object({ snapshot: z.string().min(1).max(64), ...restoreTarget })
  .strict()
  .refine((body) => !(body.database && body.path), { message: "give database or path, not both", path: ["path"] })
  .refine(intoGoesWithDatabase, intoWithoutDatabase)
  .refine(toGoesWithPath, toWithoutPath);

/** POST /api/client/backups/{snapshot}/restore: a database or a path of the account's own. */
export const clientRestoreBodySchema = z
  .object(restoreTarget)
  .strict()
  .refine((body) => Boolean(body.database) !== Boolean(body.path), { message: "give a database or a path", path: ["path"] })
  .refine(intoGoesWithDatabase, intoWithoutDatabase)
  .refine(toGoesWithPath, toWithoutPath);

/** A run's id (`20261125-020000123`) as restores name it: letters, digits and `-`. */
export const RUN_ID = /^[0-9A-Za-z-]{1,40}$/;

export const snapshotParams = z.object({ snapshot: z.string().regex(RUN_ID) });

/** A username's restore points, of whichever account had it (account_id: that account's id then). */
export const usernameRunListSchema = z.object({ snapshots: z.array(backupRunSchema.extend({ account_id: z.number().int() })) });

const username = z.string().trim().toLowerCase().regex(/^[a-z][a-z0-9_]{0,31}$/, "is not an account username");

export const usernameParams = z.object({ username });

/** A node's name, whose repository holds a terminated account's backups (`local` when left out). */
const nodeName = z.string().trim().toLowerCase().min(1).max(31);

/** GET /api/admin/backups/usernames/{username}?node=: the node whose repository to read. */
export const usernameRunsQuerySchema = z.object({ node: nodeName.optional() });

/**
 * POST /api/admin/backups/restore-account: a terminated account back, on the node whose
 * repository holds its backups (`local` when left out); the newest restore point when
 * `snapshot` is left out.
 */
export const restoreAccountBodySchema = z.object({ username, snapshot: z.string().min(1).max(64).optional(), node: nodeName.optional() }).strict();

export const restoredAccountSchema = hostingAccountSchema.extend({ message: z.string() });
