import fs from "node:fs";
import { expect, type Page } from "@playwright/test";
import { Secret, TOTP } from "otpauth";
import { screenshot, signIn, state, test } from "./support";

// Two-factor sign-in in the browser, as an admin of its own (the suite's admin keeps signing in
// with a password): set-up cancelled, then done from the secret the page shows (in groups of four,
// copied), recovery codes copied and downloaded, sign-in with a code as a step of its own (a wrong
// code refused at its field), a recovery code opens one sign-in only, new recovery codes replace
// the old ones, and another admin resets it from the admins page.

const EMAIL = "two-factor@example.com";
const PASSWORD = "two factor long password";

/** The code of the time step `offset` steps from now; the server accepts one step either way. */
const codeAt = (secret: string, offset = 0) =>
  new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offset * 30_000 });

/** Email and password, then (the second step) the code; answers once the form has answered. */
async function signInWithCode(page: Page, code: string) {
  await page.goto(`${state().baseUrl}/login`);
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("heading", { name: "Two-factor sign-in" })).toBeVisible();
  await expect(page.locator("p.alert"), "asking for the code is a step, not an error").toHaveCount(0);
  await expect(page.getByLabel("Two-factor code")).toBeFocused();
  await page.getByLabel("Two-factor code").fill(code);
  await page.getByRole("button", { name: "Verify" }).click();
}

async function signOut(page: Page) {
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login/);
}

async function expectRefused(page: Page) {
  await expect(page.locator("#code-error")).toHaveText("Two-factor code is wrong or was already used");
  await expect(page.getByLabel("Two-factor code")).toHaveAttribute("aria-invalid", "true");
  await page.goto(`${state().baseUrl}/admin`);
  await expect(page).toHaveURL(/\/login/);
}

test("set up two-factor sign-in, sign in with a code, refusals at the field, recovery codes used once and renewed, reset by another admin", async ({ page, browser }) => {
  // The suite's admin creates the admin this test uses.
  await signIn(page);
  await page.goto(`${state().baseUrl}/admin/settings/admins/create`);
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await expect(page).toHaveURL(/\/admin\/settings\/admins$/);
  await expect(page.getByRole("row", { name: new RegExp(EMAIL) })).toContainText("Off");

  const context = await browser.newContext({ permissions: ["clipboard-read", "clipboard-write"] });
  try {
    const own = await context.newPage();
    await signIn(own, { baseUrl: state().baseUrl, email: EMAIL, password: PASSWORD });
    await own.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Two-factor sign-in" }).click();
    await expect(own.getByRole("heading", { name: "Two-factor sign-in" })).toBeVisible();
    await own.getByRole("button", { name: "Set up two-factor sign-in" }).click();
    await own.getByRole("button", { name: "Cancel" }).click();
    await expect(own.getByText("Two-factor sign-in is off")).toBeVisible();

    await own.getByRole("button", { name: "Set up two-factor sign-in" }).click();
    await expect(own.getByRole("img", { name: "QR code of the two-factor secret" }).locator("svg")).toBeVisible();
    await expect(own.getByTestId("totp-secret")).toHaveText(/^([A-Z2-7]{4} ){7}[A-Z2-7]{4}$/);
    const secret = (await own.getByTestId("totp-secret").textContent())!.replace(/ /g, "");
    await own.getByRole("button", { name: "Copy secret" }).click();
    await expect(own.getByRole("button", { name: "Copied" })).toBeVisible();
    expect(await own.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await screenshot(own, "two-factor-setup");

    await own.getByLabel("Code from the app").fill("12345");
    await own.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
    await expect(own.locator("#code-error")).toHaveText("Code from the app must be the six digits the app shows");
    await own.getByLabel("Code from the app").fill(codeAt(secret));
    await own.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
    await expect(own.getByTestId("recovery-codes").locator("code")).toHaveCount(10);
    const recoveryCodes = await own.getByTestId("recovery-codes").locator("code").allTextContents();
    expect(new Set(recoveryCodes).size).toBe(10);
    const [download] = await Promise.all([own.waitForEvent("download"), own.getByRole("link", { name: "Download codes" }).click()]);
    const downloaded = fs.readFileSync((await download.path())!, "utf8");
    for (const code of recoveryCodes) expect(downloaded).toContain(code);
    await own.getByRole("button", { name: "Copy codes" }).click();
    expect(await own.evaluate(() => navigator.clipboard.readText())).toBe(recoveryCodes.join("\n"));
    await screenshot(own, "two-factor-recovery-codes");
    await own.reload();
    await expect(own.getByText("Two-factor sign-in is on")).toBeVisible();
    await expect(own.getByText(recoveryCodes[0])).toHaveCount(0);
    await expect(own.getByText(secret)).toHaveCount(0);
    await signOut(own);

    // A wrong code: no session, the refusal at the code's field.
    const wrong = ["000000", "999999"].find((code) => ![-1, 0, 1].some((offset) => codeAt(secret, offset) === code))!;
    await signInWithCode(own, wrong);
    await screenshot(own, "two-factor-login");
    await expectRefused(own);

    // The set-up code's step is used: the next step's code (one step of drift allowed) signs in.
    await signInWithCode(own, codeAt(secret, 1));
    await expect(own.getByRole("heading", { name: "Dashboard" })).toBeVisible();
    await signOut(own);

    await signInWithCode(own, recoveryCodes[0]);
    await expect(own.getByRole("heading", { name: "Dashboard" })).toBeVisible();
    await own.goto(`${state().baseUrl}/admin/settings/two-factor`);
    await expect(own.getByText("Recovery codes left: 9")).toBeVisible();

    // New recovery codes: the password and a code (a recovery code will do); the old ones stop working.
    await own.getByRole("button", { name: "Make new recovery codes…" }).click();
    await own.getByLabel("Password").fill(PASSWORD);
    await own.getByLabel("Current code").fill(recoveryCodes[0]);
    await own.getByRole("button", { name: "Make new recovery codes" }).click();
    await expect(own.locator("#code-error")).toHaveText("Current code is not correct or was already used");
    await own.getByLabel("Current code").fill(recoveryCodes[1]);
    await own.getByRole("button", { name: "Make new recovery codes" }).click();
    const renewed = own.getByRole("region", { name: "New recovery codes" }).getByTestId("recovery-codes").locator("code");
    await expect(renewed).toHaveCount(10);
    const newCodes = await renewed.allTextContents();
    expect(newCodes.filter((code) => recoveryCodes.includes(code))).toEqual([]);
    await own.getByRole("button", { name: "Done" }).click();
    await expect(own.getByText("Recovery codes left: 10")).toBeVisible();
    await signOut(own);

    await signInWithCode(own, recoveryCodes[2]);
    await expectRefused(own);
    await signInWithCode(own, newCodes[0]);
    await expect(own.getByRole("heading", { name: "Dashboard" })).toBeVisible();

    // Another admin resets it (a lost device): the admin's session ends, and the password alone signs in.
    await page.goto(`${state().baseUrl}/admin/settings/admins?search=two-factor`);
    await expect(page.getByRole("row", { name: new RegExp(EMAIL) })).toContainText("On");
    await page.getByRole("link", { name: `Edit ${EMAIL}` }).click();
    await page.getByRole("button", { name: "Reset two-factor sign-in…" }).click();
    await screenshot(page, "admin-reset-two-factor");
    await page.getByRole("button", { name: `Reset two-factor sign-in of ${EMAIL}` }).click();
    await expect(page.getByRole("status")).toContainText(`Two-factor sign-in of ${EMAIL} is off and their sessions have ended`);
    await own.goto(`${state().baseUrl}/admin`);
    await expect(own).toHaveURL(/\/login/);
    await signIn(own, { baseUrl: state().baseUrl, email: EMAIL, password: PASSWORD });
    await page.goto(`${state().baseUrl}/admin/settings/admins?search=two-factor`);
    await expect(page.getByRole("row", { name: new RegExp(EMAIL) })).toContainText("Off");
  } finally {
    await context.close();
  }
});
