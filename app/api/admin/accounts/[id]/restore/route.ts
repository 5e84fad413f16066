import { getDb } from "@/db/client";
import { managerOf } from "@/lib/accounts/manager";
import { backupOperations } from "@/lib/backups/operations";
import { restoreManagedAccount, restoreSignal } from "@/lib/backups/restores";
import { withApiKey } from "@/lib/http/with-api-key";

// POST /api/admin/accounts/{id}/restore — a database, a path, or public_html and every database,
// from a restore point; the restore ends with its request (its client gone, or the deadline)
export const POST = withApiKey(backupOperations.restore, async ({ principal, params, body, request }) =>
  restoreManagedAccount(await getDb(), managerOf(principal), params.id, body, restoreSignal(request.signal)),
);
