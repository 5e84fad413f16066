import { z } from "zod";
import { configurePhpBodySchema } from "@/lib/accounts/schemas";
import { createDomainBodySchema, updateDomainBodySchema } from "@/lib/domains/schemas";

// The domain forms of an account's page: the API's own fields (POST and PUT /api/client/domains)
// with the PHP version of POST /api/client/account/configure-php beside them.

const phpVersionId = configurePhpBodySchema.shape.php_version_id;

/** Add a domain; `php_version_id` left out: no PHP version chosen (the site runs none until one is). */
export const domainCreateFormSchema = createDomainBodySchema.omit({ proxy_port: true }).extend({ php_version_id: phpVersionId.optional() });
export type DomainCreateFormInput = z.input<typeof domainCreateFormSchema>;

/** A domain's Edit page: how its site is served, and its PHP version (null: none chosen yet). */
export const domainEditFormSchema = z.object({
  ...updateDomainBodySchema.omit({ proxy_port: true }).required({ site_profile: true }).shape,
  php_version_id: phpVersionId.nullable(),
  is_php_fpm_enabled: z.boolean(),
});
export type DomainEditFormInput = z.input<typeof domainEditFormSchema>;
