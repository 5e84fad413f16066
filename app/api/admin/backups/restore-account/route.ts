import { getDb } from "@/db/client";
import { actorOf } from "@/lib/auth/authenticate";
import { backupOperations } from "@/lib/backups/operations";
import { restoreTerminatedAccount } from "@/lib/backups/restore-account";
import { restoreSignal } from "@/lib/backups/restores";
import { withApiKey } from "@/lib/http/with-api-key";

// POST /api/admin/backups/restore-account — a terminated account made again from a restore point
// (admin keys); the restore ends with its request (its client gone, or the deadline)
export const POST = withApiKey(backupOperations.restoreAccount, async ({ principal, body, request }) =>
  restoreTerminatedAccount(await getDb(), actorOf(principal), body, restoreSignal(request.signal)),
);
