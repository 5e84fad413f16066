import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

// Runs `next build` when .next is missing or older than any source, and brings the bundles of the
// command line and the server up to date (npm start, npm test; run as a script by scripts/start.mjs).

const root = process.cwd();
const buildIdPath = path.join(root, ".next", "BUILD_ID");
const sources = ["app", "components", "lib", "db", "public", "next.config.ts", "package.json", "server.ts", "proxy.ts", "instrumentation.ts"];

function newestMtime(entry: string): number {
  const full = path.join(root, entry);
  if (!fs.existsSync(full)) return 0;
  const stat = fs.statSync(full);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const child of fs.readdirSync(full)) newest = Math.max(newest, newestMtime(path.join(entry, child)));
  return newest;
}

function buildIsCurrent(): boolean {
  if (!fs.existsSync(buildIdPath)) return false;
  const builtAt = fs.statSync(buildIdPath).mtimeMs;
  return sources.every((entry) => newestMtime(entry) <= builtAt);
}

export function buildIfNeeded(): void {
  // The bundles, each made when a source is newer than it (scripts/bundles.mjs): once here, not by
  // the first of many commands or servers started side by side.
  const bundles = spawnSync(process.execPath, [path.join(root, "scripts", "bundles.mjs")], { stdio: "inherit" });
  if (bundles.status !== 0) process.exit(bundles.status ?? 1);
  if (buildIsCurrent()) return;
  console.log("Building the panel (next build)…");
  const nextBin = path.join(root, "node_modules", "next", "dist", "bin", "next");
  const build = spawnSync(process.execPath, [nextBin, "build"], { stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) buildIfNeeded();
