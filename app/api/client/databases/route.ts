import { notImplemented } from "@/lib/http/with-api-key";
import { databaseOperations } from "@/lib/databases/operations";

// GET /api/client/databases — the account's databases (404 when there are none)
export const GET = notImplemented(databaseOperations.list);

// POST /api/client/databases — create a database (the `<username>_` prefix is added when left out)
export const POST = notImplemented(databaseOperations.create);
