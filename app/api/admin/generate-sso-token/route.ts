import { getDb } from "@/db/client";
import { withApiKey } from "@/lib/http/with-api-key";
import { ssoOperations } from "@/lib/sso/operations";
import { createSsoToken } from "@/lib/sso/service";

// POST /api/admin/generate-sso-token — create a single-use sign-in link for the key's admin (expires after 60 s)
export const POST = withApiKey(ssoOperations.generateToken, async ({ principal }) => createSsoToken(await getDb(), principal));
