import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

// `npm test -- --changed`: which test files reach a changed file through their imports. A plain
// walk of the import statements (relative paths and the `@/` alias of tsconfig.json), for a
// developer's quick loop; CI always runs everything.

const extensions = ["", ".ts", ".tsx", ".mjs", ".js", "/index.ts", "/index.tsx"];
const importPattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;

/** Files changed since the branch left `main`, committed or not (and new ones), relative to the root. */
export function changedFiles(): string[] {
  const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8" }).split("\n").filter(Boolean);
  const base = git("merge-base", "HEAD", "main")[0];
  return [...new Set([...git("diff", "--name-only", base), ...git("ls-files", "--others", "--exclude-standard")])];
}

function resolveImport(fromFile: string, specifier: string): string | null {
  let base: string;
  if (specifier.startsWith("@/")) base = specifier.slice(2);
  else if (specifier.startsWith(".")) base = path.join(path.dirname(fromFile), specifier);
  else return null; // a package
  for (const extension of extensions) {
    const candidate = path.normalize(base + extension);
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return null;
}

function importsOf(file: string): string[] {
  const source = fs.readFileSync(file, "utf8");
  return [...source.matchAll(importPattern)].map((match) => resolveImport(file, match[1])).filter((found): found is string => found !== null);
}

/**
 * The test files among `tests` whose import closure holds one of `changed`. A changed file that
 * is read at run time rather than imported (a migration, a document) counts as a change of its
 * folder: a test reaching any module in that folder, or naming the folder, runs.
 */
export function testsReaching(tests: string[], changed: string[]): string[] {
  const changedSet = new Set(changed.map((file) => path.normalize(file)));
  const changedFolders = [...changedSet].filter((file) => !/\.(ts|tsx|mjs|js)$/.test(file)).map((file) => path.dirname(file));
  const imports = new Map<string, string[]>();
  const reachedFrom = (test: string): string[] => {
    const seen = new Set<string>([test]);
    for (const file of seen) {
      if (!imports.has(file)) imports.set(file, importsOf(file));
      for (const imported of imports.get(file)!) seen.add(imported);
    }
    return [...seen];
  };
  return tests.filter((test) => {
    const reached = reachedFrom(test);
    if (reached.some((file) => changedSet.has(file))) return true;
    const source = fs.readFileSync(test, "utf8");
    return changedFolders.some((folder) => reached.some((file) => path.dirname(file) === folder) || source.includes(folder));
  });
}
