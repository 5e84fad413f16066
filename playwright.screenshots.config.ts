import { defineConfig } from "@playwright/test";
import suite from "./playwright.config";

// `npm run screenshots`: the pictures of docs/admin-ui.md, taken of the real pages by
// scripts/screenshots/ against the same server and data the browser tests start (e2e/global-setup.ts).
// Patient: a picture is worth waiting for a cold server.
export default defineConfig({ ...suite, testDir: "scripts/screenshots", outputDir: ".tmp/screenshots-results", expect: { timeout: 30_000 } });
