import { getDb } from "@/db/client";
import { terminateAccount } from "@/lib/accounts/lifecycle";
import { managerOf } from "@/lib/accounts/manager";
import { accountLifecycleOperations } from "@/lib/accounts/operations";
import { getAccount, updateAccountAdminFields } from "@/lib/accounts/service";
import { actorOf } from "@/lib/auth/authenticate";
import { accountMailSending } from "@/lib/email/sending";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/admin/accounts/{id} — one account, with its outgoing mail's flag and counts
export const GET = withApiKey(accountLifecycleOperations.get, async ({ principal, params }) => {
  const db = await getDb();
  const account = await getAccount(db, params.id, managerOf(principal));
  return { ...account, mail: await accountMailSending(db, params.id) };
});

// PUT /api/admin/accounts/{id} — change plan, email, profile, SSH access, reseller (admin keys)
export const PUT = withApiKey(accountLifecycleOperations.update, async ({ principal, params, body }) =>
  updateAccountAdminFields(await getDb(), params.id, body, actorOf(principal), managerOf(principal)),
);

// DELETE /api/admin/accounts/{id} — terminate: the servers first, then the records
export const DELETE = withApiKey(accountLifecycleOperations.terminate, async ({ principal, params }) =>
  terminateAccount(await getDb(), managerOf(principal), params.id, actorOf(principal)),
);
