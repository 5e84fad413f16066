"use server";

import { configurePhp } from "@/lib/accounts/service";
import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { createDomain, deleteDomain, getDomainOrThrow, updateDomain } from "@/lib/domains/service";
import { AppError, validationError } from "@/lib/errors";
import { assertPhpUsable } from "@/lib/hosting/service";
import { idField } from "@/lib/http/operation";
import { getPhpVersion } from "@/lib/php/service";
import type { Queryable } from "@/db/client";
import { accountPaths } from "../paths";
import { type DomainCreateFormInput, domainCreateFormSchema, type DomainEditFormInput, domainEditFormSchema } from "./schemas";

// Server actions of an account's Domains pages: the services of /api/client/domains and
// configure-php, with the admin session checked by runAdminFormAction. What they answer the form
// is the zone file's warning, if any (the domain is saved either way).

/** "Add domain": the domain, then its PHP version, checked first so that a refused version adds nothing. */
export async function createDomainAction(accountId: number, input: DomainCreateFormInput) {
  const account = idField.parse(accountId);
  return runAdminFormAction(
    accountPaths(account).domains,
    async (db) => {
      const { php_version_id: phpVersionId, ...fields } = domainCreateFormSchema.parse(input);
      if (phpVersionId !== undefined) await checkPhpVersion(db, phpVersionId);
      const domain = await createDomain(db, account, fields);
      if (phpVersionId !== undefined) await configurePhp(db, account, { domain_id: domain.id, php_version_id: phpVersionId });
      return domain;
    },
    (domain) => domain.warning ?? null,
  );
}

/** "Save Changes" on a domain: its PHP version (when one is chosen), then how its site is served. */
export async function updateDomainAction(accountId: number, domainId: number, input: DomainEditFormInput) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).domains, async (db) => {
    const id = idField.parse(domainId);
    const { php_version_id: phpVersionId, is_php_fpm_enabled: phpOn, ...site } = domainEditFormSchema.parse(input);
    const current = await getDomainOrThrow(db, { accountId: account, id });
    if (phpVersionId !== null && (phpVersionId !== current.php_version?.id || phpOn !== current.is_php_fpm_enabled)) {
      await configurePhp(db, account, { domain_id: id, php_version_id: phpVersionId, is_php_fpm_enabled: phpOn });
    }
    return updateDomain(db, account, id, site);
  });
}

export async function deleteDomainAction(accountId: number, domainId: number) {
  const account = idField.parse(accountId);
  return runAdminFormAction(accountPaths(account).domains, (db) => deleteDomain(db, account, idField.parse(domainId)));
}

/** A PHP version the panel knows and this server runs, else a refusal at php_version_id (as configure-php answers). */
async function checkPhpVersion(db: Queryable, id: number): Promise<void> {
  const php = await getPhpVersion(db, id).catch((error) => {
    if (error instanceof AppError && error.code === "NOT_FOUND") throw validationError("php_version_id", "names no installed PHP version");
    throw error;
  });
  await assertPhpUsable(php.version);
}
