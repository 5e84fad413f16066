import { expect, type Page } from "@playwright/test";
import { screenshot, signIn, state, test } from "./support";

// Backups through the admin pages: the status of every account on /admin/backups, "Back up now"
// on an account's page (a restore point appears and the status shows a success), a restore
// refused when the typed username is wrong or its "Restore to" path leaves the home, and the
// restore of a terminated account for a username without backups. The suite's server has no
// SYSTEM_USERS, so no file is restored here (tests/ cover restores); its repository is the
// default one under its DATA_DIR.
// Serial: the restore test uses the restore point the backup test made.

test.describe.configure({ mode: "serial" });

const restorePoints = (page: Page) => page.getByRole("table", { name: "Restore points" }).locator("tbody tr");
let accountId: number;

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

// The suite's server is shared: the account made here goes again, so other specs see the accounts they expect.
test.afterAll(async () => {
  if (!accountId) return;
  const { baseUrl, adminKey } = state();
  const terminated = await fetch(`${baseUrl}/api/admin/accounts/${accountId}`, {
    method: "DELETE",
    headers: { "x-api-key": adminKey.key, "x-api-secret": adminKey.secret },
  });
  expect(terminated.status).toBe(200);
});

test("backups: /admin/backups lists every account with its status, linked to its page", async ({ page }) => {
  const { baseUrl, adminKey } = state();
  const created = await fetch(`${baseUrl}/api/admin/accounts`, {
    method: "POST",
    headers: { "x-api-key": adminKey.key, "x-api-secret": adminKey.secret, "content-type": "application/json" },
    body: JSON.stringify({ username: "keeper", domain: "keeper.example" }),
  });
  expect(created.status).toBe(201);
  accountId = (await created.json()).id;

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Backups" }).click();
  await expect(page.getByRole("heading", { name: "Backups", exact: true })).toBeVisible();
  const status = page.getByRole("table", { name: "Backup status" });
  await expect(status.locator("tbody tr").filter({ hasText: "alice" })).toContainText("never");
  const keeper = status.locator("tbody tr").filter({ hasText: "keeper" });
  await expect(keeper).toContainText("never");
  await expect(keeper.getByRole("button", { name: "Back up keeper now" })).toBeVisible();
  await screenshot(page, "backups-status");
  // Where the backups go, and that the default repository is this server's own disk.
  await expect(page.getByTestId("backup-target")).toContainText("BACKUP_REPOSITORY");
  await expect(page.getByRole("note")).toContainText("This repository is on this server's own disk");
  await keeper.getByRole("link", { name: "keeper" }).click();
  await expect(page).toHaveURL(new RegExp(`/admin/accounts/${accountId}$`));
});

test("backups: Back up now on the account's page → a restore point and a success in the status", async ({ page }) => {
  await page.goto(`${state().baseUrl}/admin/accounts/${accountId}/backups`);
  const panel = page.getByRole("region", { name: "Backups" });
  await expect(panel.getByTestId("backup-status")).toContainText("Last success: never");
  await expect(restorePoints(page)).toHaveText([/No restore points yet/]);
  await panel.getByRole("button", { name: "Back up now" }).click();
  await expect(panel.getByRole("status")).toContainText("A backup of keeper has started");

  // The run goes on after the answer: the page shows it once it is done (its outcome is recorded last).
  await expect(async () => {
    await page.reload();
    await expect(page.getByTestId("backup-status")).toContainText(/Last success: \d{4}-\d{2}-\d{2} \d{2}:\d{2}/, { timeout: 1000 });
  }).toPass({ timeout: 60_000 });
  await expect(restorePoints(page).getByRole("button", { name: /^Restore from / })).toHaveCount(1);
  await expect(page.getByTestId("backup-status")).not.toContainText("Last failure");
  await screenshot(page, "account-backups");

  await page.goto(`${state().baseUrl}/admin/backups`);
  const keeper = page.getByRole("table", { name: "Backup status" }).locator("tbody tr").filter({ hasText: "keeper" });
  await expect(keeper.locator("td").nth(1)).toHaveText(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} \S+$/);
  await expect(keeper.locator("td").nth(3)).toHaveText("1");
});

test("backups: a wrong username typed, or a Restore to path leaving the home, is refused at its field; nothing restored", async ({ page }) => {
  await page.goto(`${state().baseUrl}/admin/accounts/${accountId}/backups`);
  await restorePoints(page).getByRole("button", { name: /^Restore from / }).click();
  const form = page.getByRole("form", { name: "Restore from a backup" });
  await expect(form).toContainText("will be replaced by the backup's copy");
  await form.getByLabel("One file or folder").check();
  await form.getByLabel("Path", { exact: true }).fill("public_html");
  await form.getByLabel("Type the username to confirm").fill("alice");
  await screenshot(page, "account-restore-confirm");
  await form.getByRole("button", { name: "Restore", exact: true }).click();
  await expect(form.locator(".error")).toHaveText("Not the account's username: type keeper");
  await expect(form.getByLabel("Type the username to confirm")).toHaveAttribute("aria-invalid", "true");
  await expect(form.getByRole("alert"), "the error is at its field, not repeated above").toHaveCount(0);
  await expect(page.getByRole("status")).toHaveCount(0);

  // "Restore to": beside its place, nothing overwritten; a path leaving the home is refused at its field.
  await form.getByLabel("Restore to", { exact: true }).fill("../outside");
  await expect(form).toContainText("The backup's public_html will be restored at ../outside in the home of keeper");
  await expect(form).not.toContainText("will be replaced by the backup's copy");
  await form.getByLabel("Type the username to confirm").fill("keeper");
  await form.getByRole("button", { name: "Restore", exact: true }).click();
  await expect(form.locator(".error")).toHaveText("Restore to must be a path inside the home (no ..)");
  await expect(form.getByLabel("Restore to", { exact: true })).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByRole("status")).toHaveCount(0);

  // The right username reaches the service, whose refusal is shown: this server makes no homes
  // (so the backup holds no files) and could not copy files without SYSTEM_USERS anyway.
  await form.getByLabel("Everything: public_html and every database of the backup").check();
  await form.getByLabel("Type the username to confirm").fill("keeper");
  await form.getByRole("button", { name: "Restore", exact: true }).click();
  await expect(form.getByRole("alert")).toHaveText(/holds no files|SYSTEM_USERS/);
  await expect(form.locator(".error")).toHaveCount(0);
  await expect(page.getByRole("status")).toHaveCount(0);
});

test("backups: Restore a terminated account — a bad username at its field, a username without backups said plainly", async ({ page }) => {
  await page.goto(`${state().baseUrl}/admin/backups`);
  const section = page.getByRole("region", { name: "Restore a terminated account" });
  await section.getByLabel("Username").fill("9lives");
  await section.getByRole("button", { name: "Find restore points" }).click();
  await expect(section.locator(".error")).toHaveText("Username is not an account username");

  await section.getByLabel("Username").fill("nobody_here");
  await section.getByRole("button", { name: "Find restore points" }).click();
  await expect(section.getByRole("status")).toHaveText("There are no backups of nobody_here: nothing to restore.");
  await expect(section.locator(".error")).toHaveCount(0);
  await expect(section.getByRole("button", { name: /Restore account/ })).toHaveCount(0);
  await screenshot(page, "backups-restore-terminated-none");
});

test("accounts: a terminated account is listed under Terminated with its restore point, and Restore… asks for its username", async ({ page }) => {
  const { baseUrl } = state();
  await page.goto(`${baseUrl}/admin/accounts/${accountId}`);
  await page.getByRole("button", { name: "Actions" }).click();
  await page.getByRole("button", { name: "Terminate…" }).click();
  await page.getByLabel("Type the username to confirm").fill("keeper");
  await page.getByRole("button", { name: "Terminate keeper" }).click();
  await expect(page).toHaveURL(/\/admin\/accounts$/);
  await expect(page.getByTestId("status-message")).toContainText("Account keeper terminated.");
  accountId = 0;

  await page.getByRole("navigation", { name: "Filter by status" }).getByRole("link", { name: "Terminated" }).click();
  await expect(page).toHaveURL(/status=terminated/);
  const keeper = page.locator("table.data tbody tr").filter({ hasText: "keeper" });
  await expect(keeper).toContainText("1 restore point");
  await expect(keeper).toContainText("local");
  await screenshot(page, "accounts-terminated");
  await keeper.getByRole("button", { name: "Restore keeper" }).click();
  const restore = page.getByRole("region", { name: "Restore keeper" });
  await restore.getByRole("button", { name: /^Restore account/ }).first().click();
  const form = page.getByRole("form", { name: "Restore the account" });
  await expect(form).toContainText("Makes the account keeper again");
  await expect(form.getByRole("button", { name: "Restore account keeper" })).toBeDisabled();
  await form.getByRole("button", { name: "Cancel" }).click();
  await expect(form).toHaveCount(0);
});
