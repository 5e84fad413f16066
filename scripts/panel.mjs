// `npm run panel -- …`: the command line (lib/cli/main.ts) from its bundle, made when a source is
// newer than it (scripts/bundles.mjs). Plain JavaScript: Node runs it with no loader.
import { pathToFileURL } from "node:url";
import v8 from "node:v8";
import { bundleEntry } from "./bundles.mjs";

// A command is over in seconds: V8's optimizing compiles of PGlite's WebAssembly would not pay
// back (docs/command-line.md "How it starts"). Set before PGlite is loaded, so it applies.
v8.setFlagsFromString("--liftoff-only");

await import(pathToFileURL(await bundleEntry("cli")).href);
