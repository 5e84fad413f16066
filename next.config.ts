import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Native or process-level packages stay in node_modules: one copy per process, shared with
  // server.ts (the database connection lives on globalThis).
  serverExternalPackages: ["@electric-sql/pglite", "postgres", "mysql2", "systeminformation"],
  poweredByHeader: false,
  typedRoutes: false,
};

export default nextConfig;
