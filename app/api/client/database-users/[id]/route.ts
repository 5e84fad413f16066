import { notImplemented } from "@/lib/http/with-api-key";
import { databaseUserOperations } from "@/lib/databases/operations";

// GET /api/client/database-users/{id} — one database user
export const GET = notImplemented(databaseUserOperations.get);

// DELETE /api/client/database-users/{id} — delete a database user that has no databases attached
export const DELETE = notImplemented(databaseUserOperations.delete);
