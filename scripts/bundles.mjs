// The bundles Node runs without tsx, made by esbuild from the project's TypeScript (packages stay
// in node_modules):
//   cli     lib/cli/main.ts, into node_modules/.cache/panel-cli: `npm run panel` (scripts/panel.mjs)
//   server  server.ts, into node_modules/.cache/panel-server: `npm start` (scripts/start.mjs) and
//           the tests' servers (tests/support/server.ts)
// Through tsx, which resolves and loads each of some 450 modules in its hook thread, a command
// took twice as long to start and the server twice the CPU (docs/command-line.md "How it starts",
// docs/testing.md "How `npm test` runs" have the figures).
//
// Plain JavaScript, run without tsx. Used by scripts/panel.mjs, scripts/start.mjs,
// tests/support/server.ts and, as `node scripts/bundles.mjs`, by scripts/build-if-needed.ts
// (npm start, npm test), which makes every bundle once before anything runs.
//
// Several processes may find a bundle out of date at once (tests run side by side), and a
// long-running agent or server may still load a chunk of the bundle it started from. So nothing
// is ever overwritten: every output file is named by its content hash and written under a
// temporary name then renamed, and `current.json`, which names the entry and the sources it was
// made from, is replaced the same way once all its files are there. Files no bundle has named for
// a day go.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DAY_MS = 24 * 3600_000;

/**
 * @typedef {{ source: string, outDir: string, splitting: boolean }} Bundle
 * source: the entry, relative to the project; splitting: chunks of their own for the entry's
 * dynamic imports.
 */

/** @type {Record<"cli" | "server", Bundle>} */
export const BUNDLES = {
  // The agent (lib/agent/cli.ts) and the panel's commands (lib/cli/panel.ts) are separate chunks:
  // `node agent` on a node loads none of the panel's.
  cli: { source: "lib/cli/main.ts", outDir: path.join(root, "node_modules", ".cache", "panel-cli"), splitting: true },
  server: { source: "server.ts", outDir: path.join(root, "node_modules", ".cache", "panel-server"), splitting: false },
};

const currentFileOf = (/** @type {Bundle} */ bundle) => path.join(bundle.outDir, "current.json");

/**
 * @typedef {{ entry: string, outputs: string[], inputs: string[], builtFrom: number }} Current
 * entry and outputs: file names in outDir; inputs: the sources, relative to the project;
 * builtFrom: when esbuild started reading them (ms since the epoch).
 */

/**
 * @param {Bundle} bundle
 * @returns {Current | null} the bundle named by current.json, when every source is older than it.
 */
function upToDateBundle(bundle) {
  let current;
  try {
    current = JSON.parse(fs.readFileSync(currentFileOf(bundle), "utf8"));
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
  return current.outputs.every((name) => fs.existsSync(path.join(bundle.outDir, name))) ? current : null;
}

/** Writes `content` to `file` under a temporary name, then renames it into place. */
function writeAtomically(file, content) {
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, content);
  fs.renameSync(temporary, file);
}

/**
 * @param {Bundle} bundle
 * @returns {Promise<Current>}
 */
async function build(bundle) {
  const { build: esbuild } = await import("esbuild");
  const { outDir } = bundle;
  const builtFrom = Date.now();
  const result = await esbuild({
    absWorkingDir: root,
    entryPoints: { main: bundle.source },
    tsconfig: "tsconfig.json",
    bundle: true,
    packages: "external",
    platform: "node",
    format: "esm",
    target: "node20",
    splitting: bundle.splitting,
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
  writeAtomically(currentFileOf(bundle), `${JSON.stringify(current)}\n`);
  removeUnnamedFiles(outDir, new Set([...outputs, "current.json"]));
  return current;
}

/** Removes the files of earlier bundles that are a day old (an agent started from one may still load a chunk). */
function removeUnnamedFiles(outDir, named) {
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

/**
 * @param {keyof typeof BUNDLES} name
 * @returns {Promise<string>} the path of the bundle's entry, made first when a source is newer than it.
 */
export async function bundleEntry(name) {
  const bundle = BUNDLES[name];
  const current = upToDateBundle(bundle) ?? (await build(bundle));
  return path.join(bundle.outDir, current.entry);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const name of Object.keys(BUNDLES)) await bundleEntry(/** @type {keyof typeof BUNDLES} */ (name));
}
