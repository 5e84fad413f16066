import { getDb } from "@/db/client";
import { actorOf } from "@/lib/auth/authenticate";
import { emailOperations } from "@/lib/email/operations";
import { unflagAccountMail } from "@/lib/email/sending";
import { withApiKey } from "@/lib/http/with-api-key";

// POST /api/admin/accounts/{id}/mail/unflag — lift the flag its sending limits raised (admin keys)
export const POST = withApiKey(emailOperations.unflagAccountMail, async ({ principal, params }) =>
  unflagAccountMail(await getDb(), params.id, actorOf(principal)),
);
