import { notImplemented } from "@/lib/http/with-api-key";
import { accountOperations } from "@/lib/accounts/operations";

// POST /api/client/account/configure-php — set the PHP version (and PHP-FPM) of one of the account's domains
export const POST = notImplemented(accountOperations.configurePhp);
