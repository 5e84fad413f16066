import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

// A node's agent carries lib/provisioning and nothing above it (docs/nodes.md "How it works"): no
// service, no database client, no HTTP. The import graph from its entry (lib/agent/cli.ts) is
// walked and every module must be one of these.
const ALLOWED = [/^lib\/agent\//, /^lib\/provisioning\//, /^lib\/(env|env-file|errors|data-dir)\.ts$/, /^lib\/net\//];

const IMPORT = /^\s*(?:import|export)\s+(?!type\b)[^;]*?from\s+"([^"]+)"|^\s*import\s+"([^"]+)"|await import\("([^"]+)"\)/gm;

function resolve(from: string, specifier: string): string | null {
  if (!specifier.startsWith("@/") && !specifier.startsWith(".")) return null; // a package or node: built-in
  const base = specifier.startsWith("@/") ? specifier.slice(2) : path.join(path.dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, path.join(base, "index.ts")]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return path.normalize(candidate);
  }
  throw new Error(`${from}: cannot resolve ${specifier}`);
}

function importGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const match of fs.readFileSync(file, "utf8").matchAll(IMPORT)) {
      const target = resolve(file, match[1] ?? match[2] ?? match[3]);
      if (target) visit(target);
    }
  };
  visit(entry);
  return seen;
}

test("the agent's import graph is lib/agent and lib/provisioning (with configuration and errors)", () => {
  const outside = [...importGraph("lib/agent/cli.ts")].filter((file) => !ALLOWED.some((pattern) => pattern.test(file)));
  assert.deepEqual(outside, []);
});
