import { getDb } from "@/db/client";
import { databaseOperations } from "@/lib/databases/operations";
import { deleteDatabase, getDatabaseOrThrow } from "@/lib/databases/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/databases/{id} — one database
export const GET = withApiKey(databaseOperations.get, async ({ account, params }) =>
  getDatabaseOrThrow(await getDb(), { accountId: account.id, id: params.id }),
);

// DELETE /api/client/databases/{id} — delete a database that has no users assigned
export const DELETE = withApiKey(databaseOperations.delete, async ({ account, params }) => {
  await deleteDatabase(await getDb(), account.id, params.id);
  return { message: "Database deleted" };
});
