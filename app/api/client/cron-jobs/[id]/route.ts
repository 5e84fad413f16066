import { getDb } from "@/db/client";
import { cronOperations } from "@/lib/cron/operations";
import { deleteCronJob, updateCronJob } from "@/lib/cron/service";
import { withApiKey } from "@/lib/http/with-api-key";

// PUT /api/client/cron-jobs/{id} — change a cron job
export const PUT = withApiKey(cronOperations.update, async ({ account, params, body }) => updateCronJob(await getDb(), account.id, params.id, body));

// DELETE /api/client/cron-jobs/{id} — remove a cron job
export const DELETE = withApiKey(cronOperations.delete, async ({ account, params }) => deleteCronJob(await getDb(), account.id, params.id));
