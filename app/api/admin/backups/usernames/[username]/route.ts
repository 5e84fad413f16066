import { backupOperations } from "@/lib/backups/operations";
import { listUsernameRuns } from "@/lib/backups/restore-account";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/admin/backups/usernames/{username} — the username's restore points, also of a terminated account (admin keys)
export const GET = withApiKey(backupOperations.listUsernameRuns, async ({ params }) => listUsernameRuns(params.username));
