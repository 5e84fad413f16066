// `npm run panel -- …`: the command line (lib/cli/main.ts) from its bundle, made when a source is
// newer than it (scripts/cli-bundle.mjs). Plain JavaScript: Node runs it with no loader.
import { pathToFileURL } from "node:url";
import { cliEntry } from "./cli-bundle.mjs";

await import(pathToFileURL(await cliEntry()).href);
