import { notImplemented } from "@/lib/http/with-api-key";
import { databaseUserOperations } from "@/lib/databases/operations";

// GET /api/client/database-users — the account's database users (404 when there are none)
export const GET = notImplemented(databaseUserOperations.list);

// POST /api/client/database-users — create a database user (the `<username>_` prefix is added when left out)
export const POST = notImplemented(databaseUserOperations.create);
