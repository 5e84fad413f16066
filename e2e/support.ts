import fs from "node:fs";
import path from "node:path";
import { expect, type Page } from "@playwright/test";

export interface E2EState {
  baseUrl: string;
  dataDir: string;
  admin: { email: string; password: string };
  adminKey: { key: string; secret: string };
}

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
