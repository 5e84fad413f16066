import { z } from "zod";

/** Add and edit (CLI, admin UI): a PHP version installed on the server. */
export const phpVersionSchema = z.object({
  version: z.string().trim().regex(/^[0-9]+\.[0-9]+$/, "must look like 8.3"),
});
export type PhpVersionInput = z.input<typeof phpVersionSchema>;

export type PhpVersionRecord = { id: number; version: string };

/** A version as listed (CLI, admin page): `installed` when this server has its PHP-FPM (PHP_FPM_BINARY). */
export type InstalledPhpVersion = PhpVersionRecord & { installed: boolean };

/** A row of the admin list: the version, whether it is installed, and how many domains run it. */
export type PhpVersionListRow = InstalledPhpVersion & { domain_count: number };
