import path from "node:path";
import { type Page, test } from "@playwright/test";
import { signIn, state } from "../../e2e/support";

// Takes the screenshots of docs/admin-ui.md (`npm run screenshots`): each page as an admin sees it,
// at 1440×900 and, for the narrow-screen pictures, 390×844. The account is e2e/global-setup.ts's
// "alice" (id 1). Written into docs/admin-ui/, to be committed with the pages they show.

const OUT = path.join(process.cwd(), "docs", "admin-ui");

const WIDE: [name: string, url: string][] = [
  ["dashboard", "/admin"],
  ["accounts", "/admin/accounts"],
  ["account-overview", "/admin/accounts/1"],
  ["account-domains", "/admin/accounts/1/domains"],
  ["account-settings", "/admin/accounts/1/settings"],
  ["api-keys", "/admin/settings/api-keys"],
  ["api-key-create", "/admin/settings/api-keys/create"],
  ["nodes", "/admin/nodes"],
  ["backups", "/admin/backups"],
  ["not-found", "/admin/accounts/999"],
];

const NARROW: [name: string, url: string][] = [
  ["accounts-narrow", "/admin/accounts"],
  ["account-overview-narrow", "/admin/accounts/1"],
];

async function take(page: Page, name: string, url: string) {
  await page.goto(`${state().baseUrl}${url}`);
  await page.waitForLoadState("networkidle");
  await page.screenshot({ path: path.join(OUT, `${name}.png`) });
}

test("the admin UI at 1440×900", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  for (const [name, url] of WIDE) await take(page, name, url);
});

test("the admin UI at 390×844", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page);
  for (const [name, url] of NARROW) await take(page, name, url);
});
