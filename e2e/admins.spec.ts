import { type BrowserContext, expect, type Page } from "@playwright/test";
import { screenshot, signIn, test as base, state } from "./support";

// Settings › Security › Admins in the browser: create, reset another admin's password, change
// one's own with the current one, disable (the last enabled admin cannot be); every change that
// ends sessions is seen by the other admin's browser on its very next page.

/** `signInElsewhere(email, password)`: a page in a browser of its own (closed after the test). */
const test = base.extend<{ signInElsewhere: (email: string, password: string) => Promise<Page> }>({
  signInElsewhere: async ({ browser }, use) => {
    const contexts: BrowserContext[] = [];
    await use(async (email, password) => {
      const context = await browser.newContext();
      contexts.push(context);
      const page = await context.newPage();
      await signIn(page, { baseUrl: state().baseUrl, email, password });
      return page;
    });
    for (const context of contexts) await context.close();
  },
});

async function expectSignedOut(page: Page) {
  await page.goto(`${state().baseUrl}/admin/settings/admins`);
  await expect(page).toHaveURL(/\/login\?callbackUrl=%2Fadmin%2Fsettings%2Fadmins$/);
}

async function editAdmin(page: Page, email: string) {
  await page.goto(`${state().baseUrl}/admin/settings/admins?search=${encodeURIComponent(email)}`);
  await page.getByRole("link", { name: `Edit ${email}` }).click();
  await expect(page.getByRole("heading", { name: new RegExp(`Edit admin “${email}”`) })).toBeVisible();
}

test("create an admin, reset their password, let them change their own, disable them", async ({ page, signInElsewhere }) => {
  await signIn(page);
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Admins" }).click();
  await expect(page.getByRole("heading", { name: "Admins" })).toBeVisible();
  await expect(page.getByText("admin@example.com (you)")).toBeVisible();
  await page.getByRole("link", { name: "Create admin" }).click();
  await expect(page.getByRole("heading", { name: "Create admin" })).toBeVisible();
  await page.getByLabel("Email").fill("second@example.com");
  await page.getByLabel("Name").fill("Second Admin");
  await page.getByLabel("Password").fill("short");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await expect(page.getByText("Password must be at least 10 characters")).toBeVisible();
  await page.getByLabel("Password").fill("second long password");
  await screenshot(page, "admin-create");
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await expect(page).toHaveURL(/\/admin\/settings\/admins$/);
  await expect(page.getByRole("row", { name: /second@example\.com/ })).toContainText("Enabled");
  await screenshot(page, "admins-list");

  // Another admin's password reset ends their sessions.
  const second = await signInElsewhere("second@example.com", "second long password");
  await editAdmin(page, "second@example.com");
  await screenshot(page, "admin-edit");
  await page.getByLabel("New password").fill("second reset password");
  await page.getByRole("button", { name: "Reset Password" }).click();
  await expect(page).toHaveURL(/\/admin\/settings\/admins$/);
  await expectSignedOut(second);

  // Their own change needs the current password; this browser stays in, any other is out.
  const secondHere = await signInElsewhere("second@example.com", "second reset password");
  const secondElsewhere = await signInElsewhere("second@example.com", "second reset password");
  await editAdmin(secondHere, "second@example.com");
  await expect(secondHere.getByRole("heading", { name: /\(you\)/ })).toBeVisible();
  await secondHere.getByLabel("Current password").fill("not my password");
  await secondHere.getByLabel("New password").fill("second own password");
  await secondHere.getByRole("button", { name: "Change Password" }).click();
  await expect(secondHere.getByText("Current password is not correct")).toBeVisible();
  await secondHere.getByLabel("Current password").fill("second reset password");
  await secondHere.getByRole("button", { name: "Change Password" }).click();
  await expect(secondHere).toHaveURL(/\/admin\/settings\/admins$/);
  await secondHere.reload();
  await expect(secondHere.getByRole("heading", { name: "Admins" })).toBeVisible();
  await expectSignedOut(secondElsewhere);

  // Disabling ends their session and stops sign-in.
  await editAdmin(page, "second@example.com");
  await page.getByLabel("Enabled").uncheck();
  await page.getByRole("button", { name: "Save Status" }).click();
  await expect(page).toHaveURL(/\/admin\/settings\/admins$/);
  await expect(page.getByRole("row", { name: /second@example\.com/ })).toContainText("Disabled");
  await expectSignedOut(secondHere);
  await secondHere.getByLabel("Email").fill("second@example.com");
  await secondHere.getByLabel("Password").fill("second own password");
  await secondHere.getByRole("button", { name: "Sign in" }).click();
  await expect(secondHere.locator("p.alert")).toContainText("Wrong email or password");

  // The last enabled admin cannot be disabled: the refusal is at the field.
  await editAdmin(page, "admin@example.com");
  await page.getByLabel("Enabled").uncheck();
  await page.getByRole("button", { name: "Save Status" }).click();
  await expect(page.locator("#is_enabled-error")).toContainText("cannot be turned off for the last enabled admin");
  await screenshot(page, "admin-last-enabled");
  await page.goto(`${state().baseUrl}/admin/settings/admins`);
  await expect(page.getByRole("row", { name: /admin@example\.com/ })).toContainText("Enabled");
});

test("signing out ends the admin's sessions: a form left open elsewhere is sent to sign in, nothing saved", async ({ page, signInElsewhere }) => {
  await signIn(page);
  const elsewhere = await signInElsewhere(state().admin.email, state().admin.password);
  await elsewhere.goto(`${state().baseUrl}/admin/plans/create`);
  await elsewhere.getByLabel("Name").fill("never-saved-plan");

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login/);
  await expectSignedOut(page);

  await elsewhere.getByRole("button", { name: "Create", exact: true }).click();
  await expect(elsewhere).toHaveURL(/\/login\?callbackUrl=%2Fadmin%2Fplans%2Fcreate$/);
  await signIn(page);
  await page.goto(`${state().baseUrl}/admin/plans?search=never-saved`);
  await expect(page.getByText("No plan matches")).toBeVisible();
});
