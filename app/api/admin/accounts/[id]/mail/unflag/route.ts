import { getDb } from "@/db/client";
import { accountLifecycleOperations } from "@/lib/accounts/operations";
import { actorOf } from "@/lib/auth/authenticate";
import { unflagAccountMail } from "@/lib/email/sending";
import { withApiKey } from "@/lib/http/with-api-key";

// POST /api/admin/accounts/{id}/mail/unflag — lift the flag its sending limits raised (admin keys)
export const POST = withApiKey(accountLifecycleOperations.mailUnflag, async ({ principal, params }) =>
  unflagAccountMail(await getDb(), params.id, actorOf(principal)),
);
