import { getDb } from "@/db/client";
import { emailOperations } from "@/lib/email/operations";
import { deleteMailbox, getMailbox, updateMailbox } from "@/lib/email/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/email/mailboxes/{id} — one mailbox
export const GET = withApiKey(emailOperations.getMailbox, async ({ account, params }) => getMailbox(await getDb(), account.id, params.id));

// PUT /api/client/email/mailboxes/{id} — change a mailbox's password, quota or enabled
export const PUT = withApiKey(emailOperations.updateMailbox, async ({ account, params, body }) => updateMailbox(await getDb(), account.id, params.id, body));

// DELETE /api/client/email/mailboxes/{id} — remove a mailbox
export const DELETE = withApiKey(emailOperations.deleteMailbox, async ({ account, params }) => deleteMailbox(await getDb(), account.id, params.id));
