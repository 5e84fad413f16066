import { integer, pgTable, text } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";

export const phpVersions = pgTable("php_versions", {
  id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
  version: text("version").notNull().unique(),
  createdAt: createdAt(),
});
