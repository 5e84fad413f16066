import { getDb } from "@/db/client";
import { backupOperations } from "@/lib/backups/operations";
import { listRuns } from "@/lib/backups/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/backups — the account's restore points
export const GET = withApiKey(backupOperations.clientList, async ({ account }) => ({ snapshots: await listRuns(await getDb(), account.id) }));
