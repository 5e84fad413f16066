import { expect, type Page } from "@playwright/test";
import { api, signIn, state, test } from "./support";

// The admin frame everywhere (issue 39, item 7): a 404 inside the frame, a favicon, a skip link,
// a visible focus ring; on a 390 × 844 screen no page scrolls sideways, lists keep their row
// actions on the screen, and the menu folds away.

async function aliceId(): Promise<number> {
  const response = await api("/api/admin/accounts?search=alice", state().adminKey);
  const [alice] = (await response.json()) as { id: number; username: string }[];
  return alice.id;
}

test.describe("at 1440 × 900", () => {
  test.use({ viewport: { width: 1440, height: 900 } });

  test("an account that does not exist: a 404 inside the frame that says it may have been terminated", async ({ page }) => {
    await signIn(page);
    const response = await page.goto(`${state().baseUrl}/admin/accounts/999/edit`);
    expect(response?.status()).toBe(404);
    await expect(page.getByRole("heading", { name: "Account 999 does not exist" })).toBeVisible();
    await expect(page.getByText("It may have been terminated.")).toBeVisible();
    await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
    await page.getByRole("link", { name: "Restore from backup" }).click();
    await expect(page.getByRole("heading", { name: "Restore a terminated account" })).toBeVisible();
    await page.goBack();
    await page.getByRole("link", { name: "Back to accounts" }).click();
    await expect(page).toHaveURL(/\/admin\/accounts$/);
  });

  test("any other unknown admin address: a generic 404 inside the frame", async ({ page }) => {
    await signIn(page);
    const response = await page.goto(`${state().baseUrl}/admin/no-such-page/here`);
    expect(response?.status()).toBe(404);
    await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
    await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
    await expect(page.getByText("admin@example.com")).toBeVisible();
    await page.getByRole("link", { name: "Go to the dashboard" }).click();
    await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
  });

  test("a favicon", async ({ page, request }) => {
    await page.goto(`${state().baseUrl}/login`);
    const href = await page.locator('link[rel="icon"]').first().getAttribute("href");
    expect(href).toBeTruthy();
    const icon = await request.get(new URL(href!, state().baseUrl).toString());
    expect(icon.status()).toBe(200);
    expect(icon.headers()["content-type"]).toContain("image/svg+xml");
  });

  test("the first Tab reaches 'Skip to content', which moves the focus to the page's content; the focus ring is 2 px", async ({ page }) => {
    await signIn(page);
    await page.goto(`${state().baseUrl}/admin/settings/api-keys`);
    await page.keyboard.press("Tab");
    const skip = page.getByRole("link", { name: "Skip to content" });
    await expect(skip).toBeFocused();
    await expect(skip).toBeInViewport();
    await page.keyboard.press("Enter");
    await expect(page.locator("main#main-content")).toBeFocused();
    // The next Tab goes into the content, not back through the menu.
    await page.keyboard.press("Tab");
    const focused = page.locator(":focus");
    expect(await focused.evaluate((element) => element.closest("main")?.id)).toBe("main-content");
    const outline = await focused.evaluate((element) => {
      const style = getComputedStyle(element);
      return { width: style.outlineWidth, style: style.outlineStyle };
    });
    expect(outline).toEqual({ width: "2px", style: "solid" });
  });
});

test.describe("at 390 × 844", () => {
  test.use({ viewport: { width: 390, height: 844 } });

  async function scrollsSideways(page: Page) {
    return page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
  }

  test("no admin page scrolls sideways", async ({ page }) => {
    await signIn(page);
    const alice = await aliceId();
    const pages = [
      "/admin",
      "/admin/accounts",
      "/admin/accounts/create",
      `/admin/accounts/${alice}/edit`,
      `/admin/accounts/${alice}/domains`,
      `/admin/accounts/${alice}/dns`,
      "/admin/backups",
      "/admin/nodes",
      "/admin/nodes/create",
      "/admin/plans",
      "/admin/plans/create",
      "/admin/resellers",
      "/admin/php-versions",
      "/admin/settings/api-keys",
      "/admin/settings/api-keys/create",
      "/admin/settings/admins",
      "/admin/settings/two-factor",
      "/admin/accounts/999/edit",
      "/admin/no-such-page",
    ];
    const wide: string[] = [];
    for (const path of pages) {
      await page.goto(`${state().baseUrl}${path}`);
      await expect(page.locator("main#main-content")).toBeVisible();
      if (await scrollsSideways(page)) wide.push(`${path}: ${await page.evaluate(() => document.documentElement.scrollWidth)} px`);
    }
    expect(wide, "pages wider than the screen").toEqual([]);
  });

  test("a list keeps each row's actions on the screen", async ({ page }) => {
    await signIn(page);
    await page.goto(`${state().baseUrl}/admin/settings/api-keys?search=bulk-key-1`);
    for (const name of ["Edit bulk-key-19", "Delete bulk-key-19"]) {
      const action = page.getByRole(name.startsWith("Edit") ? "link" : "button", { name });
      await action.scrollIntoViewIfNeeded();
      const box = (await action.boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, name).toBeLessThanOrEqual(390);
    }
    await page.getByRole("link", { name: "Edit bulk-key-19" }).click();
    await expect(page.getByRole("heading", { name: "Edit API key" })).toBeVisible();
  });

  test("the menu folds behind a Menu button, opens, and folds again after a choice", async ({ page }) => {
    await signIn(page);
    const menu = page.getByRole("button", { name: "Menu" });
    const accounts = page.getByRole("link", { name: "Hosting accounts" });
    await expect(menu).toBeVisible();
    await expect(menu).toHaveAttribute("aria-expanded", "false");
    await expect(accounts).toBeHidden();
    // The page's own content starts near the top, not below the whole menu.
    const heading = (await page.getByRole("heading", { name: "Dashboard" }).boundingBox())!;
    expect(heading.y).toBeLessThan(200);
    await menu.click();
    await expect(menu).toHaveAttribute("aria-expanded", "true");
    await accounts.click();
    await expect(page).toHaveURL(/\/admin\/accounts$/);
    await expect(accounts).toBeHidden();
    await expect(menu).toHaveAttribute("aria-expanded", "false");
  });
});
