import { getDb } from "@/db/client";
import { databaseUserOperations } from "@/lib/databases/operations";
import { deleteDatabaseUser, getDatabaseUserOrThrow } from "@/lib/databases/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/database-users/{id} — one database user
export const GET = withApiKey(databaseUserOperations.get, async ({ account, params }) =>
  getDatabaseUserOrThrow(await getDb(), { accountId: account.id, id: params.id }),
);

// DELETE /api/client/database-users/{id} — delete a database user that has no databases attached
export const DELETE = withApiKey(databaseUserOperations.delete, async ({ account, params }) => {
  await deleteDatabaseUser(await getDb(), account.id, params.id);
  return { message: "Database user deleted" };
});
