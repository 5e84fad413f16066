import { getDb } from "@/db/client";
import { databaseUserOperations } from "@/lib/databases/operations";
import { detachDatabase } from "@/lib/databases/service";
import { withApiKey } from "@/lib/http/with-api-key";

// DELETE /api/client/database-users/{id}/databases/{database_id} — revoke the user's privileges on a database
export const DELETE = withApiKey(databaseUserOperations.detachDatabase, async ({ account, params }) =>
  detachDatabase(await getDb(), account.id, params.id, params.database_id),
);
