import { getDb } from "@/db/client";
import { withApiKey } from "@/lib/http/with-api-key";
import { sshOperations } from "@/lib/ssh/operations";
import { setAccountPassword } from "@/lib/ssh/service";

// PUT /api/client/account/password — the SFTP/SSH password (hashed by the system, never stored by the panel)
export const PUT = withApiKey(sshOperations.setPassword, async ({ account, body }) => setAccountPassword(await getDb(), account.id, body));

// DELETE /api/client/account/password — back to keys only
export const DELETE = withApiKey(sshOperations.removePassword, async ({ account }) => setAccountPassword(await getDb(), account.id, null));
