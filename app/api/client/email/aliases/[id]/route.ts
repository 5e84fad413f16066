import { getDb } from "@/db/client";
import { emailOperations } from "@/lib/email/operations";
import { deleteAlias } from "@/lib/email/service";
import { withApiKey } from "@/lib/http/with-api-key";

// DELETE /api/client/email/aliases/{id} — remove an alias
export const DELETE = withApiKey(emailOperations.deleteAlias, async ({ account, params }) => deleteAlias(await getDb(), account.id, params.id));
