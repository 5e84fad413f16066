import path from "node:path";
import { type Page, test } from "@playwright/test";
import { api, signIn, state } from "../../e2e/support";

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

async function take(page: Page, name: string, url: string, { fullPage = false } = {}) {
  await page.goto(`${state().baseUrl}${url}`);
  await page.waitForLoadState("networkidle");
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage });
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

// Last, so the pictures above show alice as global-setup made her: her Email tab with a mailbox,
// an alias and a catch-all, made through the API.
test("an account's Email tab at 1440×900", async ({ page }) => {
  const { adminKey } = state();
  const made = [
    await api("/api/client/email/mailboxes", adminKey, "alice", { method: "POST", body: { address: "info@alice.example", password: "a long mailbox secret", quota_mb: 2048 } }),
    await api("/api/client/email/aliases", adminKey, "alice", { method: "POST", body: { address: "sales@alice.example", targets: ["info@alice.example", "owner@example.net"] } }),
    await api("/api/client/email/aliases", adminKey, "alice", { method: "POST", body: { address: "@alice.example", targets: ["info@alice.example"] } }),
  ];
  for (const response of made) if (response.status !== 201) throw new Error(`seeding alice's mail: ${response.status} ${await response.text()}`);
  await page.setViewportSize({ width: 1440, height: 900 });
  await signIn(page);
  await take(page, "account-email", "/admin/accounts/1/email", { fullPage: true });
});
