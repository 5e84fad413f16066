import { getDb } from "@/db/client";
import { databaseUserOperations } from "@/lib/databases/operations";
import { createDatabaseUser, listDatabaseUsers } from "@/lib/databases/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/database-users — the account's database users (404 when there are none)
export const GET = withApiKey(databaseUserOperations.list, async ({ account }) =>
  listDatabaseUsers(await getDb(), account.id),
);

// POST /api/client/database-users — create a database user (the `<username>_` prefix is added when left out)
export const POST = withApiKey(databaseUserOperations.create, async ({ account, body }) =>
  createDatabaseUser(await getDb(), account, body),
);
