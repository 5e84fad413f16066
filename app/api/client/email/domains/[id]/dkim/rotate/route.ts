import { getDb } from "@/db/client";
import { emailOperations } from "@/lib/email/operations";
import { rotateDkimKey } from "@/lib/email/service";
import { withApiKey } from "@/lib/http/with-api-key";

// POST /api/client/email/domains/{id}/dkim/rotate — publish a new DKIM key, then sign with it
export const POST = withApiKey(emailOperations.rotateDkim, async ({ account, params }) => rotateDkimKey(await getDb(), account.id, params.id));
