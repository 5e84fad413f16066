import { getDb } from "@/db/client";
import { backupOperations } from "@/lib/backups/operations";
import { listUsernameRuns } from "@/lib/backups/restore-account";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/admin/backups/usernames/{username}?node= — the username's restore points in a node's repository, also of a terminated account (admin keys)
export const GET = withApiKey(backupOperations.listUsernameRuns, async ({ params, query }) => listUsernameRuns(await getDb(), params.username, query.node));
