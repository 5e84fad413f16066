import type { InstalledPhpVersion } from "@/lib/php/schemas";

/** The PHP versions a domain can run, as choices: one this server has not installed says so. */
export const phpVersionChoices = (versions: InstalledPhpVersion[]) =>
  versions.map((php) => ({ value: String(php.id), label: php.installed ? `PHP ${php.version}` : `PHP ${php.version} (not installed on this server)` }));
