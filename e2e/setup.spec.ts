import { expect } from "@playwright/test";
import { createTestDatabase, type TestDatabase } from "../tests/support/database";
import { startServer, type TestServer } from "../tests/support/server";
import { screenshot, test } from "./support";

// A fresh install: no admin yet. The server prints a one-time set-up link; its page creates the
// first admin, who then signs in. Its own server on its own empty database (not global-setup's).

let database: TestDatabase;
let server: TestServer;

test.beforeAll(async () => {
  database = await createTestDatabase("pglite");
  server = await startServer(database.env);
});

test.afterAll(async () => {
  await server?.stop();
  await database?.drop();
});

test("the printed set-up link creates the first admin, once; a wrong token creates nobody", async ({ page }) => {
  const link = server.output().match(/http:\/\/\S+\/setup\?token=[0-9A-Za-z]+/)?.[0];
  expect(link, "npm start prints the set-up link").toBeTruthy();

  await page.goto(`${server.baseUrl}/setup?token=not-the-token`);
  await expect(page.getByText("This set-up link is not valid")).toBeVisible();
  await expect(page.getByLabel("Email")).toHaveCount(0);

  await page.goto(link!);
  await screenshot(page, "setup");
  await page.getByLabel("Name").fill("First Admin");
  await page.getByLabel("Email").fill("first@example.com");
  await page.getByLabel("Password").fill("short");
  await page.getByRole("button", { name: "Create admin" }).click();
  await expect(page.locator("p.error")).toHaveText("Password must be at least 10 characters");
  await expect(page.getByLabel("Email"), "a refused form keeps what was typed").toHaveValue("first@example.com");

  await page.getByLabel("Password").fill("a long enough password");
  await page.getByRole("button", { name: "Create admin" }).click();
  await expect(page).toHaveURL(/\/login/);
  await page.getByLabel("Email").fill("first@example.com");
  await page.getByLabel("Password").fill("a long enough password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Dashboard" })).toBeVisible();

  await page.goto(link!);
  await expect(page.getByText("Set-up is complete")).toBeVisible();
  await expect(page.getByLabel("Password")).toHaveCount(0);
});
