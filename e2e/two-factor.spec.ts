import { expect, type Page, test } from "@playwright/test";
import { Secret, TOTP } from "otpauth";
import { screenshot, signIn, state } from "./support";

// Two-factor sign-in in the browser, as an admin of its own (the suite's admin keeps signing in
// with a password): set up from the secret the page shows, sign in with a code, a wrong code is
// refused, a recovery code opens one sign-in only.

const EMAIL = "two-factor@example.com";
const PASSWORD = "two factor long password";

/** The code of the time step `offset` steps from now; the server accepts one step either way. */
const codeAt = (secret: string, offset = 0) =>
  new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offset * 30_000 });

/** Email and password, then (asked for) the code; answers once the form has answered. */
async function signInWithCode(page: Page, code: string) {
  await page.goto(`${state().baseUrl}/login`);
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.locator("p.alert")).toContainText("Enter the code from your authenticator app");
  await page.getByLabel("Two-factor code").fill(code);
  await page.getByRole("button", { name: "Verify" }).click();
}

async function signOut(page: Page) {
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login/);
}

test("set up two-factor sign-in, sign in with a code, a wrong code and a used recovery code are refused", async ({ page, browser }) => {
  // The suite's admin creates the admin this test uses.
  await signIn(page);
  await page.goto(`${state().baseUrl}/admin/settings/admins/create`);
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await expect(page).toHaveURL(/\/admin\/settings\/admins$/);

  const context = await browser.newContext();
  try {
    const own = await context.newPage();
    await signIn(own, { baseUrl: state().baseUrl, email: EMAIL, password: PASSWORD });
    await own.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Two-factor sign-in" }).click();
    await expect(own.getByRole("heading", { name: "Two-factor sign-in" })).toBeVisible();
    await own.getByRole("button", { name: "Set up two-factor sign-in" }).click();
    await expect(own.getByRole("img", { name: "QR code of the two-factor secret" }).locator("svg")).toBeVisible();
    const secret = (await own.getByTestId("totp-secret").textContent())!.trim();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    await screenshot(own, "two-factor-setup");

    await own.getByLabel("Code from the app").fill("12345");
    await own.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
    await expect(own.getByText("must be the six digits the app shows")).toBeVisible();
    await own.getByLabel("Code from the app").fill(codeAt(secret));
    await own.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
    await expect(own.getByTestId("recovery-codes").locator("code")).toHaveCount(10);
    const recoveryCodes = await own.getByTestId("recovery-codes").locator("code").allTextContents();
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    await screenshot(own, "two-factor-recovery-codes");
    await own.reload();
    await expect(own.getByText("Two-factor sign-in is on")).toBeVisible();
    await expect(own.getByText(recoveryCodes[0])).toHaveCount(0);
    await expect(own.getByText(secret)).toHaveCount(0);
    await signOut(own);

    // A wrong code: no session, the form says so.
    const wrong = ["000000", "999999"].find((code) => ![-1, 0, 1].some((offset) => codeAt(secret, offset) === code))!;
    await signInWithCode(own, wrong);
    await expect(own.locator("p.alert")).toContainText("Wrong or already used code");
    await own.goto(`${state().baseUrl}/admin`);
    await expect(own).toHaveURL(/\/login/);
    await screenshot(own, "two-factor-login");

    // The set-up code's step is used: the next step's code (one step of drift allowed) signs in.
    await signInWithCode(own, codeAt(secret, 1));
    await expect(own.getByRole("heading", { name: "Dashboard" })).toBeVisible();
    await signOut(own);

    await signInWithCode(own, recoveryCodes[0]);
    await expect(own.getByRole("heading", { name: "Dashboard" })).toBeVisible();
    await own.goto(`${state().baseUrl}/admin/settings/two-factor`);
    await expect(own.getByText("Recovery codes left: 9")).toBeVisible();
    await signOut(own);

    await signInWithCode(own, recoveryCodes[0]);
    await expect(own.locator("p.alert")).toContainText("Wrong or already used code");
    await own.goto(`${state().baseUrl}/admin`);
    await expect(own).toHaveURL(/\/login/);
  } finally {
    await context.close();
  }
});
