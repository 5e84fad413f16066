import { spawnSync } from "node:child_process";
import { buildIfNeeded } from "./build-if-needed";

// `npm run screenshots`: the pictures of docs/admin-ui.md taken again of the real pages
// (scripts/screenshots/admin-ui.spec.ts, built first when the sources changed).
buildIfNeeded();
const playwright = spawnSync("npx", ["playwright", "test", "-c", "playwright.screenshots.config.ts"], { stdio: "inherit" });
process.exit(playwright.status ?? 1);
