import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { buildIfNeeded } from "./build-if-needed";

// `npm test`: build when needed, then every test file under tests/ (node:test, in one run, so
// one summary), then the Playwright suite under e2e/. Each suite runs on PGlite and on
// PostgreSQL (TEST_BACKENDS, default both; TEST_POSTGRES_URL, default the local server).

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith(".test.ts") ? [full] : [];
  });
}

function run(command: string, args: string[]): number {
  const result = spawnSync(command, args, { stdio: "inherit" });
  return result.status ?? 1;
}

buildIfNeeded();
const only = process.argv.slice(2);
const files = only.length ? only : testFiles("tests").sort();
let status = run(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", ...files]);

const hasE2e = fs.existsSync("e2e") && fs.readdirSync("e2e").some((name) => name.endsWith(".spec.ts"));
if (!only.length && hasE2e) {
  status ||= run(process.execPath, [path.join("node_modules", "@playwright", "test", "cli.js"), "test"]);
}
process.exit(status);
