import { getDb } from "@/db/client";
import { databaseOperations } from "@/lib/databases/operations";
import { createDatabase, listDatabases } from "@/lib/databases/service";
import { withApiKey } from "@/lib/http/with-api-key";

// GET /api/client/databases — the account's databases (404 when there are none)
export const GET = withApiKey(databaseOperations.list, async ({ account }) => listDatabases(await getDb(), account.id));

// POST /api/client/databases — create a database (the `<username>_` prefix is added when left out)
export const POST = withApiKey(databaseOperations.create, async ({ account, body }) =>
  createDatabase(await getDb(), account, body),
);
