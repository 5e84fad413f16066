import fs from "node:fs";
import path from "node:path";
import { test as base, type BrowserContext, expect, type Page } from "@playwright/test";

export interface E2EState {
  baseUrl: string;
  dataDir: string;
  admin: { email: string; password: string };
  adminKey: { key: string; secret: string };
}

/**
 * The suite's `test`: each test gets a page of its own in one browser context per worker, emptied
 * after each test (its pages closed, its cookies and permissions cleared), so a test starts signed
 * out as in a browser of its own. Chromium here spends about 2 s of CPU making a context and half
 * a second making a page: a context per test cost the suite about two minutes (docs/testing.md).
 * A test that needs another browser (a second admin, a time zone) still makes its own context.
 */
export const test = base.extend<object, { workerContext: BrowserContext }>({
  workerContext: [
    async ({ browser }, use) => {
      const context = await browser.newContext();
      await use(context);
      await context.close();
    },
    { scope: "worker" },
  ],
  context: async ({ workerContext }, use) => {
    await use(workerContext);
    for (const page of workerContext.pages()) await page.close();
    await workerContext.clearCookies();
    await workerContext.clearPermissions();
  },
  page: async ({ context, viewport }, use) => {
    const page = await context.newPage();
    if (viewport) await page.setViewportSize(viewport);
    await use(page);
  },
});

export const state = (): E2EState => JSON.parse(fs.readFileSync(path.join(process.cwd(), ".tmp", "e2e.json"), "utf8"));

/** Signs in through the login form: as the suite's admin on the suite's server unless told otherwise. */
export async function signIn(page: Page, { baseUrl, email, password } = { baseUrl: state().baseUrl, ...state().admin }) {
  await page.goto(`${baseUrl}/login`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();
}

export async function screenshot(page: Page, name: string) {
  await page.screenshot({ path: path.join("e2e-artifacts", `${name}.png`), fullPage: true });
}

/** Calls the API as an integration would: GET, or `method` with a JSON `body`. */
export async function api(path_: string, key: { key: string; secret: string }, account?: string, { method = "GET", body }: { method?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = { "x-api-key": key.key, "x-api-secret": key.secret };
  if (account) headers["x-hosting-account"] = account;
  if (body !== undefined) headers["content-type"] = "application/json";
  return fetch(`${state().baseUrl}${path_}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}
