import { getDb } from "@/db/client";
import { emailOperations } from "@/lib/email/operations";
import { createMailbox, listMailboxes } from "@/lib/email/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/email/mailboxes — the account's mailboxes
export const GET = withApiKey(emailOperations.listMailboxes, async ({ account }) => listMailboxes(await getDb(), account.id));

// POST /api/client/email/mailboxes — add a mailbox
export const POST = withApiKey(emailOperations.createMailbox, async ({ account, body }) => createMailbox(await getDb(), account.id, body));
