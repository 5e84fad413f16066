import { getDb } from "@/db/client";
import { managerOf } from "@/lib/accounts/manager";
import { backupOperations } from "@/lib/backups/operations";
import { listAccountRuns, requestBackup } from "@/lib/backups/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/admin/accounts/{id}/backups — the account's restore points
export const GET = withApiKey(backupOperations.listRuns, async ({ principal, params }) => listAccountRuns(await getDb(), managerOf(principal), params.id));

// POST /api/admin/accounts/{id}/backups — a backup now (202; the outcome shows in GET /api/admin/backups)
export const POST = withApiKey(backupOperations.runNow, async ({ principal, params }) => requestBackup(await getDb(), managerOf(principal), params.id));
