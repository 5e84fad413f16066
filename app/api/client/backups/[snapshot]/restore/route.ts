import { getDb } from "@/db/client";
import { backupOperations } from "@/lib/backups/operations";
import { restoreFromRun } from "@/lib/backups/service";
import { withApiKey } from "@/lib/http/with-api-key";

// POST /api/client/backups/{snapshot}/restore — a database or a path of the account's own
export const POST = withApiKey(backupOperations.clientRestore, async ({ account, params, body }) =>
  restoreFromRun(await getDb(), account, { snapshot: params.snapshot, ...body }),
);
