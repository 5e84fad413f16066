import fs from "node:fs";
import { defineConfig } from "@playwright/test";

// Browser tests of the admin pages against the real server (e2e/global-setup.ts starts it on a
// fresh database). Debian's Chromium when installed (this project's machines cannot download
// Playwright's browsers), else Playwright's own.
const debianChromium = "/usr/bin/chromium";

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  workers: 1,
  timeout: 60_000,
  // How long an expectation waits for the page to get there: a server action answers in well
  // under a second on a quiet machine, but CI run 17 (load 20) missed a 5 s wait for one.
  expect: { timeout: 15_000 },
  globalSetup: "./e2e/global-setup.ts",
  reporter: [["list"]],
  use: {
    screenshot: "only-on-failure",
    launchOptions: fs.existsSync(debianChromium)
      ? {
          executablePath: debianChromium,
          args: [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
          ],
        }
      : {},
  },
});
