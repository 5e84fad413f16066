import { defineConfig } from "drizzle-kit";

// Only `drizzle-kit generate` uses this; migrations are applied by db/migrate.ts at start.
export default defineConfig({
  dialect: "postgresql",
  schema: "./db/schema/index.ts",
  out: "./db/migrations",
});
