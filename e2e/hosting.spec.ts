import { expect, type Page } from "@playwright/test";
import { ed25519KeyLine, fingerprintOf } from "../tests/support/ssh-keys";
import { api, screenshot, signIn, state, test } from "./support";

// Plans, resellers, PHP versions and hosting accounts through their admin pages: list, create,
// edit, errors at their fields, and an account suspended in the UI refused by the API at once.
// Serial: the account uses the plan and the reseller made before it.

test.describe.configure({ mode: "serial" });

const rows = (page: Page) => page.locator("table.data tbody tr");
const row = (page: Page, text: string) => rows(page).filter({ hasText: text });

test.beforeEach(async ({ page }) => {
  await signIn(page);
});

test("plans: create with quotas, a duplicate name is refused at its field, edit", async ({ page }) => {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Plans" }).click();
  await expect(page.getByRole("heading", { name: "Plans" })).toBeVisible();
  await expect(row(page, "default")).toContainText("Unlimited");
  await screenshot(page, "plans-list");

  await page.getByRole("link", { name: "Create plan" }).click();
  await expect(page.getByRole("heading", { name: "Create plan" })).toBeVisible();
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await expect(page.getByText("Name is required")).toBeVisible();
  await expect(page.getByLabel("Name", { exact: true })).toHaveAttribute("aria-invalid", "true");
  await page.getByLabel("Name", { exact: true }).fill("Business");
  await page.getByLabel("Databases", { exact: true }).fill("10");
  await page.getByLabel("Disk space (MB)").fill("2048");
  await screenshot(page, "plan-create");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await expect(page).toHaveURL(/\/admin\/plans$/);
  await expect(row(page, "Business")).toContainText("2,048 MB");
  await expect(row(page, "Business")).toContainText("10");

  await page.goto(`${state().baseUrl}/admin/plans/create`);
  await page.getByLabel("Name", { exact: true }).fill("Business");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await expect(page.locator("#name-error")).toHaveText("Name is already a plan");
  await expect(page.locator("p.alert"), "the error is at its field, not repeated above").toHaveCount(0);
  await expect(page.getByLabel("Name", { exact: true })).toBeFocused();
  await expect(page.getByLabel("Name", { exact: true })).toHaveAttribute("aria-invalid", "true");
  await expect(page.getByRole("button", { name: "Create", exact: true })).toBeEnabled();
  await screenshot(page, "plan-create-duplicate");

  await page.goto(`${state().baseUrl}/admin/plans`);
  await page.getByRole("link", { name: "Edit Business" }).click();
  await expect(page.getByRole("heading", { name: "Edit plan “Business”" })).toBeVisible();
  await expect(page.getByLabel("Databases", { exact: true })).toHaveValue("10");
  await screenshot(page, "plan-edit");
  await page.getByLabel("Databases", { exact: true }).fill("25");
  await page.getByLabel("DNS records").fill("500");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await expect(page).toHaveURL(/\/admin\/plans$/);
  await expect(row(page, "Business")).toContainText("25");
  await expect(row(page, "Business")).toContainText("500");
});

test("resellers: create, a bad username is refused at its field, rename", async ({ page }) => {
  await page.goto(`${state().baseUrl}/admin/resellers`);
  await expect(page.getByText("No resellers yet")).toBeVisible();
  await page.getByRole("link", { name: "Create reseller" }).click();
  await expect(page.getByRole("heading", { name: "Create reseller" })).toBeVisible();
  await page.getByLabel("Username").fill("9lives");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await expect(page.locator("#username-error")).toHaveText(/^Username must start with a letter/);
  await page.getByLabel("Username").fill("acme");
  await screenshot(page, "reseller-create");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await expect(page).toHaveURL(/\/admin\/resellers$/);
  await expect(row(page, "acme")).toBeVisible();
  await screenshot(page, "resellers-list");

  await page.getByRole("link", { name: "Edit acme" }).click();
  await expect(page.getByRole("heading", { name: "Edit reseller “acme”" })).toBeVisible();
  await expect(page.getByLabel("Username")).toHaveValue("acme");
  await screenshot(page, "reseller-edit");
  await page.getByLabel("Username").fill("acme_hosting");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await expect(page).toHaveURL(/\/admin\/resellers$/);
  await expect(row(page, "acme_hosting")).toBeVisible();
});

test("PHP versions: add two, a duplicate edit is refused at its field, edit", async ({ page }) => {
  await page.goto(`${state().baseUrl}/admin/php-versions`);
  for (const version of ["8.3", "8.4"]) {
    await page.getByRole("link", { name: "Add PHP version" }).click();
    await expect(page.getByRole("heading", { name: "Add PHP version" })).toBeVisible();
    await page.getByLabel("Version", { exact: true }).fill(version);
    if (version === "8.3") await screenshot(page, "php-version-create");
    await page.getByRole("button", { name: "Add", exact: true }).click();
    await expect(page).toHaveURL(/\/admin\/php-versions$/);
  }
  // 8.2 is the suite's own (global-setup.ts).
  await expect(rows(page)).toHaveText([/PHP 8\.2/, /PHP 8\.3/, /PHP 8\.4/]);
  await screenshot(page, "php-versions-list");

  await page.getByRole("link", { name: "Edit PHP 8.4" }).click();
  await expect(page.getByRole("heading", { name: "Edit PHP 8.4" })).toBeVisible();
  await page.getByLabel("Version", { exact: true }).fill("8.3");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await expect(page.locator("#version-error")).toHaveText("Version is already installed");
  await screenshot(page, "php-version-edit");
  await page.getByLabel("Version", { exact: true }).fill("8.5");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await expect(page).toHaveURL(/\/admin\/php-versions$/);
  await expect(rows(page)).toHaveText([/PHP 8\.2/, /PHP 8\.3/, /PHP 8\.5/]);
});

test("accounts: create on a plan with a reseller; Suspend from the Actions menu → its key gets 403 at once, the banner says since when and why; Unsuspend → 200", async ({ page }) => {
  const { baseUrl, adminKey } = state();
  await page.goto(`${baseUrl}/admin/accounts`);
  await page.getByRole("link", { name: "Create account" }).click();
  await expect(page.getByRole("heading", { name: "Create hosting account" })).toBeVisible();
  await expect(page.getByLabel("Plan")).toHaveValue("default");
  await page.getByLabel("Username").fill("root");
  await page.getByLabel("Domain").fill("not a domain");
  await page.getByLabel("Plan").selectOption("Business");
  await page.getByLabel("Reseller").selectOption("acme_hosting");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  // The whole form is checked at once: both errors, each at its field.
  await expect(page.locator("#username-error")).toHaveText("Username is reserved by the server");
  await expect(page.locator("#domain-error")).toHaveText("Domain is not a valid domain name");
  // The username's rule and its hint say the same words.
  await page.getByLabel("Username").fill("shop_per");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  const rule = (await page.locator("#username-error").textContent())!.replace(/^Username must /, "");
  await expect(page.locator("#username-hint")).toContainText(`Must ${rule}.`);
  await page.getByLabel("Username").fill("shopper");
  await page.getByLabel("Domain").fill("shop.example");
  await page.getByLabel("Email").fill("owner@shop.example");
  await screenshot(page, "account-create");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await expect(page).toHaveURL(/\/admin\/accounts$/);
  await expect(page.getByTestId("status-message")).toHaveText("Account shopper created.");
  const shopper = row(page, "shopper");
  await expect(shopper).toContainText("shop.example");
  await expect(shopper).toContainText("Business");
  await expect(shopper).toContainText("acme_hosting");
  await expect(shopper).toContainText("Active");
  await screenshot(page, "accounts-list");

  // A key of the account itself, made in the API-key form.
  await page.goto(`${baseUrl}/admin/settings/api-keys/create`);
  await page.getByLabel("Name").fill("Shopper's deploy script");
  await page.getByLabel("Who the key acts for").selectOption("account");
  await page.getByLabel("Hosting account").selectOption({ label: "shopper" });
  await page.getByRole("button", { name: "Create", exact: true }).click();
  const accountKey = {
    key: (await page.getByTestId("created-key").textContent())!,
    secret: (await page.getByTestId("created-secret").textContent())!,
  };
  const before = await api("/api/client/account", accountKey);
  expect(before.status).toBe(200);
  const account = await before.json();
  expect(account).toMatchObject({ username: "shopper", status: "active", has_ssh_access: false, plan: { name: "Business", max_databases: 25 } });

  // The username links to the account; plan, owner and SSH access are on its Settings tab.
  await page.goto(`${baseUrl}/admin/accounts`);
  await row(page, "shopper").getByRole("link", { name: "shopper", exact: true }).click();
  await expect(page.getByRole("heading", { name: "Hosting account “shopper”" })).toBeVisible();
  await page.getByRole("navigation", { name: "Account sections" }).getByRole("link", { name: "Settings" }).click();
  await expect(page).toHaveURL(/\/settings$/);
  await expect(page.getByLabel("Plan")).toHaveValue("Business");
  await expect(page.getByLabel("Reseller")).toHaveValue("acme_hosting");
  await page.getByLabel("SSH access").check();
  await page.getByLabel("Reseller").selectOption("");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await expect(page.getByTestId("status-message")).toHaveText("Settings saved.");
  await expect(page).toHaveURL(/\/settings$/);

  // Suspend from the Actions menu, with a reason; the banner says since when and why.
  await page.getByRole("navigation", { name: "Account sections" }).getByRole("link", { name: "Overview" }).click();
  await expect(page.getByRole("heading", { name: "Hosting account “shopper”" })).toBeVisible();
  await page.getByRole("button", { name: "Actions" }).click();
  await page.getByRole("button", { name: "Suspend…" }).click();
  await page.getByLabel("Reason for suspension (optional)").fill("Invoice 1042 unpaid");
  await screenshot(page, "account-suspend");
  await page.getByRole("button", { name: "Suspend shopper" }).click();
  await expect(page.getByTestId("status-message")).toContainText("shopper is suspended");
  const banner = page.getByRole("region", { name: "Account status" });
  await expect(banner).toHaveText(/^Suspended since \d{4}-\d{2}-\d{2} \d{2}:\d{2} \S+ — Invoice 1042 unpaidUnsuspend$/);
  const summary = page.getByRole("region", { name: "Account", exact: true });
  await expect(summary).toContainText("Suspended");
  await expect(summary).toContainText("Invoice 1042 unpaid");
  await screenshot(page, "account-suspended");
  // The banner is on every tab of the account.
  await page.getByRole("navigation", { name: "Account sections" }).getByRole("link", { name: "Domains" }).click();
  await expect(page.getByRole("region", { name: "Account status" })).toContainText("Invoice 1042 unpaid");
  await page.goto(`${baseUrl}/admin/accounts`);
  await expect(row(page, "shopper")).toContainText("Suspended");
  await page.getByRole("navigation", { name: "Filter by status" }).getByRole("link", { name: "Suspended" }).click();
  await expect(rows(page)).toHaveCount(1);
  await expect(row(page, "shopper")).toHaveCount(1);
  await page.getByRole("navigation", { name: "Filter by status" }).getByRole("link", { name: "Active" }).click();
  await expect(row(page, "shopper")).toHaveCount(0);
  await expect(row(page, "alice")).toHaveCount(1);

  const suspended = await api("/api/client/account", accountKey);
  expect(suspended.status).toBe(403);
  expect((await suspended.json()).error).toBe("This hosting account is suspended");
  // DESIGN.md: admin and reseller keys may still act on a suspended account (and see it so).
  const asAdmin = await api("/api/client/account", adminKey, "shopper");
  expect(asAdmin.status).toBe(200);
  expect(await asAdmin.json()).toMatchObject({ status: "suspended", is_suspended: true, has_ssh_access: true, reseller_id: null });

  await page.goto(`${baseUrl}/admin/accounts`);
  await page.getByRole("link", { name: "Open shopper" }).click();
  await expect(page.getByRole("heading", { name: "Hosting account “shopper”" })).toBeVisible();
  await page.getByRole("region", { name: "Account status" }).getByRole("button", { name: "Unsuspend" }).click();
  await expect(page.getByTestId("status-message")).toContainText("shopper is unsuspended");
  await expect(page.getByRole("region", { name: "Account", exact: true })).toContainText("Active");
  await expect(page.getByRole("region", { name: "Account status" })).toHaveCount(0);
  await page.getByRole("button", { name: "Actions" }).click();
  await expect(page.getByRole("button", { name: "Suspend…" })).toBeVisible();
  expect((await api("/api/client/account", accountKey)).status).toBe(200);

  // The key list stays as the other specs expect it.
  await page.goto(`${baseUrl}/admin/settings/api-keys?search=Shopper`);
  page.once("dialog", (dialog) => void dialog.accept());
  await page.getByRole("button", { name: "Delete Shopper's deploy script" }).click();
  await expect(page.getByText("No API key matches")).toBeVisible();
});

test("the lists search in the URL and fit a phone's screen", async ({ page }) => {
  await page.goto(`${state().baseUrl}/admin/accounts?search=shop`);
  await expect(rows(page)).toHaveCount(1);
  await page.getByLabel("Search by username, domain or email").fill("nobody-here");
  await expect(page).toHaveURL(/search=nobody-here/);
  await expect(page.getByText("No hosting account matches “nobody-here”")).toBeVisible();
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${state().baseUrl}/admin/accounts`);
  // Every account the other specs have made so far (all on one page).
  const accounts = await (await api("/api/admin/accounts", state().adminKey)).json();
  await expect(rows(page)).toHaveCount(accounts.length);
  await screenshot(page, "accounts-list-phone");
  await page.goto(`${state().baseUrl}/admin/plans/create`);
  await screenshot(page, "plan-create-phone");
});

test("accounts: SSH keys on the account's page — add (fingerprint shown, the API sees it), a key with options refused at its field, remove", async ({ page }) => {
  const { baseUrl, adminKey } = state();
  const line = ed25519KeyLine();
  const key = { line: `${line} me@laptop`, fingerprint: fingerprintOf(line) };
  await page.goto(`${baseUrl}/admin/accounts`);
  await page.getByRole("link", { name: "Open shopper" }).click();
  await page.getByRole("navigation", { name: "Account sections" }).getByRole("link", { name: "Files & SSH" }).click();
  const section = page.getByRole("region", { name: "SSH keys" });
  await expect(section).toContainText("No keys yet.");
  await section.getByLabel("Key name").fill("Laptop");
  await section.getByLabel("Public key (one line of an OpenSSH .pub file)").fill(`command="/bin/sh" ${key.line}`);
  await section.getByRole("button", { name: "Add key" }).click();
  await expect(section.locator(".error")).toContainText("options such as command= or from= are not allowed");
  await expect(section.getByLabel("Public key (one line of an OpenSSH .pub file)")).toHaveAttribute("aria-invalid", "true");
  await section.getByLabel("Public key (one line of an OpenSSH .pub file)").fill(key.line);
  await section.getByRole("button", { name: "Add key" }).click();
  await expect(page.getByTestId("status-message")).toHaveText("SSH key Laptop added.");
  await expect(row(page, "Laptop")).toContainText(key.fingerprint);
  await expect(row(page, "Laptop")).toContainText("ssh-ed25519");
  await screenshot(page, "account-ssh-keys");
  const listed = await (await api("/api/client/ssh-keys", adminKey, "shopper")).json();
  expect(listed.ssh_keys).toEqual([expect.objectContaining({ name: "Laptop", type: "ssh-ed25519", fingerprint: key.fingerprint })]);

  await page.getByRole("button", { name: "Remove the SSH key Laptop" }).click();
  await expect(section).toContainText("No keys yet.");
  await expect(page.getByTestId("status-message")).toHaveText("SSH key Laptop removed.");
  expect((await (await api("/api/client/ssh-keys", adminKey, "shopper")).json()).ssh_keys).toEqual([]);
});

test("accounts: PHP settings on the account's page — a POST size below the upload size refused at its field, a saved value the API reads", async ({ page }) => {
  const { baseUrl, adminKey } = state();
  await page.goto(`${baseUrl}/admin/accounts`);
  await page.getByRole("link", { name: "Open shopper" }).click();
  await page.getByRole("navigation", { name: "Account sections" }).getByRole("link", { name: "PHP" }).click();
  const settings = page.getByRole("form", { name: "PHP settings" });
  await expect(settings.getByLabel("Memory limit (MB)")).toHaveValue("256");
  await settings.getByLabel("Upload size (MB)").fill("128");
  await settings.getByRole("button", { name: "Save PHP settings" }).click();
  await expect(settings.locator(".error")).toHaveText("POST size (MB) must be at least the upload size (an upload travels in a POST)");
  await settings.getByLabel("POST size (MB)").fill("128");
  await settings.getByLabel("Memory limit (MB)").fill("512");
  await settings.getByRole("button", { name: "Save PHP settings" }).click();
  await expect(settings.locator(".error")).toHaveCount(0);
  await expect(page.getByTestId("status-message")).toHaveText("PHP settings saved.");
  await screenshot(page, "account-php-settings");
  await expect.poll(async () => (await (await api("/api/client/php-settings", adminKey, "shopper")).json()).memory_limit_mb).toBe(512);
  expect(await (await api("/api/client/php-settings", adminKey, "shopper")).json()).toMatchObject({ upload_max_filesize_mb: 128, post_max_size_mb: 128 });
});

test("accounts: Terminate asks for the username, then removes the account and its records", async ({ page }) => {
  const { baseUrl, adminKey } = state();
  const created = await fetch(`${baseUrl}/api/admin/accounts`, {
    method: "POST",
    headers: { "x-api-key": adminKey.key, "x-api-secret": adminKey.secret, "content-type": "application/json" },
    body: JSON.stringify({ username: "leaving", domain: "leaving.example" }),
  });
  expect(created.status).toBe(201);
  const { id } = await created.json();

  await page.goto(`${baseUrl}/admin/accounts/${id}`);
  await page.getByRole("button", { name: "Actions" }).click();
  await page.getByRole("button", { name: "Terminate…" }).click();
  const confirm = page.getByRole("button", { name: "Terminate leaving" });
  await expect(confirm).toBeDisabled();
  await page.getByLabel("Type the username to confirm").fill("leavin");
  await expect(confirm).toBeDisabled();
  await page.getByLabel("Type the username to confirm").fill("leaving");
  await screenshot(page, "account-terminate");
  await confirm.click();
  await expect(page).toHaveURL(/\/admin\/accounts$/);
  await expect(page.getByTestId("status-message")).toContainText("Account leaving terminated.");
  await expect(page.getByRole("link", { name: "Open leaving" })).toHaveCount(0);
  expect((await api(`/api/admin/accounts/${id}`, adminKey)).status).toBe(404);
  expect((await api("/api/client/domains", adminKey, "leaving")).status).toBe(404);
});
