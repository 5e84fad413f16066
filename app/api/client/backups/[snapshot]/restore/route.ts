import { getDb } from "@/db/client";
import { backupOperations } from "@/lib/backups/operations";
import { restoreFromRun, restoreSignal } from "@/lib/backups/restores";
import { withApiKey } from "@/lib/http/with-api-key";

// POST /api/client/backups/{snapshot}/restore — a database or a path of the account's own; the
// restore ends with its request (its client gone, or the deadline)
export const POST = withApiKey(backupOperations.clientRestore, async ({ account, params, body, request }) =>
  restoreFromRun(await getDb(), account, { snapshot: params.snapshot, ...body }, restoreSignal(request.signal)),
);
