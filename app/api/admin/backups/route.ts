import { getDb } from "@/db/client";
import { managerOf } from "@/lib/accounts/manager";
import { backupOperations } from "@/lib/backups/operations";
import { backupStatus } from "@/lib/backups/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/admin/backups — every account's backups (a reseller key: its own accounts)
export const GET = withApiKey(backupOperations.status, async ({ principal }) => backupStatus(await getDb(), managerOf(principal)));
