// `npm run panel -- …`: the command line (lib/cli/main.ts) from its bundle, made when a source is
// newer than it (scripts/bundles.mjs). Plain JavaScript: Node runs it with no loader.
import { pathToFileURL } from "node:url";
import { bundleEntry } from "./bundles.mjs";

await import(pathToFileURL(await bundleEntry("cli")).href);
