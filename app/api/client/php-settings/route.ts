import { getDb } from "@/db/client";
import { withApiKey } from "@/lib/http/with-api-key";
import { phpSettingsOperations } from "@/lib/php-settings/operations";
import { getPhpSettings, updatePhpSettings } from "@/lib/php-settings/service";

// GET /api/client/php-settings — the account's PHP settings
export const GET = withApiKey(phpSettingsOperations.get, async ({ account }) => getPhpSettings(await getDb(), account.id));

// PUT /api/client/php-settings — change them within the plan's maxima
export const PUT = withApiKey(phpSettingsOperations.update, async ({ account, body }) => updatePhpSettings(await getDb(), account.id, body));
