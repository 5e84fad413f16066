import { expect, type Page } from "@playwright/test";
import { api, screenshot, signIn, state, test } from "./support";

// The account page in tabs (issue 39): a URL per tab, the current one marked, the header's
// Actions menu on each; errors in plain words, a whole form at once; the parts this server has not
// configured say how to configure them. On the suite's own account alice (global-setup.ts), whose
// server keeps no homes, runs no MariaDB and has no node but its own; nothing here changes alice.

const TABS: [label: string, path: string, heading: string][] = [
  ["Overview", "", "Hosting account “alice”"],
  ["Domains", "/domains", "Domains of “alice”"],
  ["Databases", "/databases", "Databases of “alice”"],
  ["Database users", "/database-users", "Database users of “alice”"],
  ["DNS", "/dns", "DNS records of “alice”"],
  ["Cron", "/cron-jobs", "Cron jobs of “alice”"],
  ["Email", "/email", "Email of “alice”"],
  ["Files & SSH", "/files-ssh", "Files & SSH of “alice”"],
  ["PHP", "/php", "PHP of “alice”"],
  ["Certificates", "/certificates", "Certificates of “alice”"],
  ["Backups", "/backups", "Backups of “alice”"],
  ["Settings", "/settings", "Settings of “alice”"],
];

let alice: number;
const base = () => `${state().baseUrl}/admin/accounts/${alice}`;
const tabs = (page: Page) => page.getByRole("navigation", { name: "Account sections" });

test.beforeAll(async () => {
  const accounts = await (await api("/api/admin/accounts?search=alice", state().adminKey)).json();
  alice = accounts.find((account: { username: string }) => account.username === "alice").id;
});

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("each tab has its own URL, its heading and the tab marked; the old /edit URL leads to the overview", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`${base()}/edit`);
  await expect(page).toHaveURL(new RegExp(`/admin/accounts/${alice}$`));
  for (const [label, path, heading] of TABS) {
    await tabs(page).getByRole("link", { name: label, exact: true }).click();
    await expect(page).toHaveURL(new RegExp(`/admin/accounts/${alice}${path.replace(/[/-]/g, "\\$&")}(\\?.*)?$`));
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(heading);
    await expect(tabs(page).locator('[aria-current="page"]')).toHaveText(label);
    await expect(page.getByRole("button", { name: "Actions" })).toBeVisible();
  }
  // A page under a tab keeps its tab marked.
  await page.goto(`${base()}/domains/create`);
  await expect(tabs(page).locator('[aria-current="page"]')).toHaveText("Domains");
});

test("the overview: disk against the plan, or why it is not measured; the Actions menu; Move without a node says to add one", async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(base());
  await expect(page.getByTestId("disk-usage")).toHaveText(/^— (of [\d.]+ [MG]B|\(no limit\)), not measured here: quotas are off$/);
  await page.getByRole("button", { name: "Actions" }).click();
  const move = page.getByRole("link", { name: "Move: add a node →" });
  await expect(move).toHaveAttribute("href", "/admin/nodes/create");
  await expect(page.getByRole("button", { name: "Suspend…" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Terminate…" })).toBeVisible();
  await screenshot(page, "account-actions-menu");
  // Cancel leaves the account as it is.
  await page.getByRole("button", { name: "Suspend…" }).click();
  await page.getByRole("button", { name: "Cancel" }).click();
  await expect(page.getByLabel("Reason for suspension (optional)")).toHaveCount(0);
  expect((await (await api("/api/client/account", state().adminKey, "alice")).json()).status).toBe("active");

  await tabs(page).getByRole("link", { name: "Settings" }).click();
  const node = page.getByRole("region", { name: "Node" });
  await expect(node).toContainText("No other node takes accounts now");
  await expect(node.getByRole("link", { name: "Add a node →" })).toHaveAttribute("href", "/admin/nodes/create");
});

test("unconfigured parts say how to configure them: MariaDB, backups' place, local's heartbeat", async ({ page }) => {
  await page.goto(`${base()}/databases`);
  await expect(page.getByTestId("mariadb-unconfigured")).toContainText("MariaDB is not configured: set MYSQL_PROVISION_URL");
  await page.goto(`${base()}/database-users`);
  await expect(page.getByTestId("mariadb-unconfigured")).toContainText("MariaDB is not configured: set MYSQL_PROVISION_URL");
  await page.goto(`${base()}/backups`);
  await expect(page.getByTestId("backup-target")).toContainText("BACKUP_REPOSITORY");
  await expect(page.getByRole("note")).toContainText("on this server's own disk");

  await page.goto(`${state().baseUrl}/admin/nodes`);
  const local = page.locator("table.data tbody tr").filter({ hasText: "local" });
  await expect(local).toContainText("none: the panel's own machine");
  await expect(page.getByText("so it sends no heartbeat")).toBeVisible();
});

test("errors in plain words, the whole form at once: a DNS record with no name and a TTL of 10", async ({ page }) => {
  await page.goto(`${base()}/dns/create`);
  await page.getByLabel("Name").fill("");
  await page.getByLabel("Content").fill("203.0.113.9");
  await page.getByLabel("TTL (seconds)").fill("10");
  await page.getByRole("button", { name: "Add record" }).click();
  await expect(page.locator("#name-error")).toHaveText("Name is required");
  await expect(page.locator("#ttl-error")).toHaveText("TTL (seconds) must be at least 60");
  await page.getByLabel("TTL (seconds)").fill("100000");
  await page.getByRole("button", { name: "Add record" }).click();
  await expect(page.locator("#ttl-error")).toHaveText("TTL (seconds) can be at most 86400");
  await expect(page.locator(".main")).not.toContainText(/Too (big|small)|expected (string|number)/);
  await screenshot(page, "plain-errors");
});

test("on a phone the tabs and the Actions menu stay reachable and nothing scrolls sideways", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  for (const path of ["", "/settings", "/backups"]) {
    await page.goto(`${base()}${path}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${path || "overview"} scrolls sideways by ${overflow}px`).toBeLessThanOrEqual(0);
  }
  await page.goto(base());
  await page.getByRole("button", { name: "Actions" }).click();
  await expect(page.getByRole("button", { name: "Terminate…" })).toBeInViewport();
  await screenshot(page, "account-actions-phone");
  // Escape closes it; the tabs are reachable.
  await page.keyboard.press("Escape");
  await expect(page.getByRole("button", { name: "Terminate…" })).toHaveCount(0);
  await tabs(page).getByRole("link", { name: "Settings" }).click();
  await expect(page).toHaveURL(/\/settings$/);
  await screenshot(page, "account-settings-phone");
});
