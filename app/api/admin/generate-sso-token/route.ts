import { notImplemented } from "@/lib/http/with-api-key";
import { ssoOperations } from "@/lib/sso/operations";

// POST /api/admin/generate-sso-token — create a single-use sign-in link for the key's admin (expires after 60 s)
export const POST = notImplemented(ssoOperations.generateToken);
