import { notImplemented } from "@/lib/http/with-api-key";
import { databaseUserOperations } from "@/lib/databases/operations";

// DELETE /api/client/database-users/{id}/databases/{database_id} — revoke the user's privileges on a database
export const DELETE = notImplemented(databaseUserOperations.detachDatabase);
