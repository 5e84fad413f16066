// The command line's bundle: lib/cli/main.ts and the project's modules it imports, made by
// esbuild into node_modules/.cache/panel-cli, so that `npm run panel` (scripts/panel.mjs) runs in
// plain Node: a command starts in half the time it took through tsx, which resolves and loads each
// of ~450 modules in its hook thread (docs/command-line.md "How it starts" has the figures).
// Packages stay in node_modules (not bundled).
//
// Plain JavaScript, run without tsx. Used by scripts/panel.mjs (`npm run panel`) and, as
// `node scripts/cli-bundle.mjs`, by scripts/build-if-needed.ts (npm start, npm test).
//
// Several processes may find the bundle out of date at once (tests run side by side), and a
// long-running agent may still load a chunk of the bundle it started from. So nothing is ever
// overwritten: every output file is named by its content hash and written under a temporary
// name then renamed, and `current.json`, which names the entry and the sources it was made from,
// is replaced the same way once all its files are there. Files no bundle has named for a day go.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outDir = path.join(root, "node_modules", ".cache", "panel-cli");
const currentFile = path.join(outDir, "current.json");
const DAY_MS = 24 * 3600_000;

/**
 * @typedef {{ entry: string, outputs: string[], inputs: string[], builtFrom: number }} Current
 * entry and outputs: file names in outDir; inputs: the sources, relative to the project;
 * builtFrom: when esbuild started reading them (ms since the epoch).
 */

/** @returns {Current | null} the bundle named by current.json, when every source is older than it. */
function upToDateBundle() {
  let current;
  try {
    current = JSON.parse(fs.readFileSync(currentFile, "utf8"));
  } catch {
    return null;
  }
  for (const input of current.inputs) {
    let stat;
    try {
      stat = fs.statSync(path.join(root, input));
    } catch {
      return null;
    }
    if (stat.mtimeMs >= current.builtFrom) return null;
  }
  return current.outputs.every((name) => fs.existsSync(path.join(outDir, name))) ? current : null;
}

/** Writes `content` to `file` under a temporary name, then renames it into place. */
function writeAtomically(file, content) {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, content);
  fs.renameSync(temporary, file);
}

/** @returns {Promise<Current>} */
async function build() {
  const { build: esbuild } = await import("esbuild");
  const builtFrom = Date.now();
  const result = await esbuild({
    absWorkingDir: root,
    entryPoints: { main: "lib/cli/main.ts" },
    tsconfig: "tsconfig.json",
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    // The agent (lib/agent/cli.ts) and the panel's commands (lib/cli/panel.ts) are separate
    // chunks: `node agent` on a node loads none of the panel's.
    splitting: true,
    entryNames: "[name]-[hash]",
    chunkNames: "[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    outdir: outDir,
    // Stack traces name the sources with NODE_OPTIONS=--enable-source-maps.
    sourcemap: "linked",
    metafile: true,
    write: false,
    logLevel: "error",
  });
  fs.mkdirSync(outDir, { recursive: true });
  const outputs = result.outputFiles.map((file) => path.basename(file.path));
  for (const file of result.outputFiles) {
    if (!fs.existsSync(file.path)) writeAtomically(file.path, file.contents);
  }
  const entry = outputs.find((name) => /^main-.*\.mjs$/.test(name));
  if (!entry) throw new Error("esbuild made no main-*.mjs");
  const inputs = Object.keys(result.metafile.inputs).concat("tsconfig.json");
  /** @type {Current} */
  const current = { entry, outputs, inputs, builtFrom };
  writeAtomically(currentFile, `${JSON.stringify(current)}\n`);
  removeUnnamedFiles(new Set([...outputs, "current.json"]));
  return current;
}

/** Removes the files of earlier bundles that are a day old (an agent started from one may still load a chunk). */
function removeUnnamedFiles(named) {
  for (const name of fs.readdirSync(outDir)) {
    if (named.has(name)) continue;
    const file = path.join(outDir, name);
    try {
      if (Date.now() - fs.statSync(file).mtimeMs > DAY_MS) fs.rmSync(file, { force: true });
    } catch {
      // Removed by another process meanwhile.
    }
  }
}

/** @returns {Promise<string>} the path of the bundle's entry, made first when a source is newer than it. */
export async function cliEntry() {
  const current = upToDateBundle() ?? (await build());
  return path.join(outDir, current.entry);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  await cliEntry();
}
