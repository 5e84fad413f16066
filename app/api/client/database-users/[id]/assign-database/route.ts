import { notImplemented } from "@/lib/http/with-api-key";
import { databaseUserOperations } from "@/lib/databases/operations";

// POST /api/client/database-users/{id}/assign-database — grant the user privileges on a database (again: replaces them)
export const POST = notImplemented(databaseUserOperations.assignDatabase);
