// `npm start`: `next build` and the bundles when a source is newer than them
// (scripts/build-if-needed.ts, through tsx), then the server (server.ts: migrations, then HTTP on
// PORT) from its bundle in this process, with no loader: as the tests run it.
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { bundleEntry } from "./bundles.mjs";

const buildIfNeeded = fileURLToPath(new URL("build-if-needed.ts", import.meta.url));
const built = spawnSync(process.execPath, ["--import", "tsx", buildIfNeeded], { stdio: "inherit" });
if (built.status !== 0) process.exit(built.status ?? 1);
await import(pathToFileURL(await bundleEntry("server")).href);
