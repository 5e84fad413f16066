import { getDb } from "@/db/client";
import { databaseUserOperations } from "@/lib/databases/operations";
import { assignDatabase } from "@/lib/databases/service";
import { withApiKey } from "@/lib/http/with-api-key";

// POST /api/client/database-users/{id}/assign-database — grant the user privileges on a database (again: replaces them)
export const POST = withApiKey(databaseUserOperations.assignDatabase, async ({ account, params, body }) =>
  assignDatabase(await getDb(), account.id, params.id, body),
);
