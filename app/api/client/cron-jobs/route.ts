import { getDb } from "@/db/client";
import { cronOperations } from "@/lib/cron/operations";
import { createCronJob, listCronJobs } from "@/lib/cron/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/cron-jobs — the account's cron jobs
export const GET = withApiKey(cronOperations.list, async ({ account }) => listCronJobs(await getDb(), account.id));

// POST /api/client/cron-jobs — add a cron job (run as the account's user, in its home)
export const POST = withApiKey(cronOperations.create, async ({ account, body }) => createCronJob(await getDb(), account.id, body));
