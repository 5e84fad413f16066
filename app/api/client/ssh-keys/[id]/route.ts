import { getDb } from "@/db/client";
import { withApiKey } from "@/lib/http/with-api-key";
import { sshOperations } from "@/lib/ssh/operations";
import { deleteSshKey } from "@/lib/ssh/service";

// DELETE /api/client/ssh-keys/{id} — remove one of the account's SSH keys
export const DELETE = withApiKey(sshOperations.deleteKey, async ({ account, params }) => deleteSshKey(await getDb(), account.id, params.id));
