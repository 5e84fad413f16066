import { notImplemented } from "@/lib/http/with-api-key";
import { databaseOperations } from "@/lib/databases/operations";

// GET /api/client/databases/{id} — one database
export const GET = notImplemented(databaseOperations.get);

// DELETE /api/client/databases/{id} — delete a database that has no users assigned
export const DELETE = notImplemented(databaseOperations.delete);
