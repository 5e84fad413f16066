import { getDb } from "@/db/client";
import { withApiKey } from "@/lib/http/with-api-key";
import { sshOperations } from "@/lib/ssh/operations";
import { addSshKey, listSshKeys } from "@/lib/ssh/service";

// GET /api/client/ssh-keys — the account's SSH keys with their fingerprints
export const GET = withApiKey(sshOperations.listKeys, async ({ account }) => listSshKeys(await getDb(), account.id));

// POST /api/client/ssh-keys — add an OpenSSH public key (SFTP and SSH logins)
export const POST = withApiKey(sshOperations.addKey, async ({ account, body }) => addSshKey(await getDb(), account.id, body));
