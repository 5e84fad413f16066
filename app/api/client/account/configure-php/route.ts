import { getDb } from "@/db/client";
import { accountOperations } from "@/lib/accounts/operations";
import { configurePhp } from "@/lib/accounts/service";
import { withApiKey } from "@/lib/http/with-api-key";

// POST /api/client/account/configure-php — set the PHP version (and PHP-FPM) of one of the account's domains
export const POST = withApiKey(accountOperations.configurePhp, async ({ account, body }) =>
  configurePhp(await getDb(), account.id, body),
);
