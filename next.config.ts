import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native or process-level packages stay in node_modules: one copy per process, shared with
  // server.ts (the database connection lives on globalThis). drizzle-orm too: server.ts opens the
  // connection with its copy, and a second, bundled copy fails drizzle's `instanceof` checks and
  // falls back to walking prototypes on every query (a hot spot in the CPU profile).
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "mysql2", "systeminformation", "drizzle-orm"],
  poweredByHeader: false,
  typedRoutes: false,
};

export default nextConfig;
