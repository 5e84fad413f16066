import { expect as baseExpect, type Page } from "@playwright/test";
import { api, screenshot, signIn, state, test } from "./support";

// An account's Email tab (issue 39 for email): a mail domain, a mailbox and an alias made through
// the pages, listed, refused at their fields (the browser's check and the server's 422), changed
// and deleted; the plan's mail limits; what a mail client is told; and, since the suite's server
// runs no mail server (MAIL_SERVER is off), the notice saying how to run one. On an account of its
// own, `postie`, on a plan of its own made through the plan form; nothing here touches alice.

// Each change applies the account's mail before it answers, and a mailbox's password is hashed
// first: on a loaded machine that takes more than expect's default 5 s.
const expect = baseExpect.configure({ timeout: 20_000 });

const PASSWORD = "a long mailbox secret";
let postie: number;
const tab = () => `${state().baseUrl}/admin/accounts/${postie}/email`;
const section = (page: Page, name: string) => page.getByRole("region", { name });

// Once per server (a worker started again after a failure finds postie made).
test.beforeAll(async () => {
  const found = (await (await api("/api/admin/accounts?search=postie", state().adminKey)).json()).find((one: { username: string }) => one.username === "postie");
  if (found) {
    postie = found.id;
    return;
  }
  const created = await api("/api/admin/accounts", state().adminKey, undefined, {
    method: "POST",
    body: { username: "postie", domain: "postie.example" },
  });
  expect(created.status).toBe(201);
  postie = (await created.json()).id;
  const shop = await api("/api/client/domains", state().adminKey, "postie", { method: "POST", body: { domain: "postie-shop.example", domain_type: "domain" } });
  expect(shop.status).toBe(201);
});

test.beforeEach(async ({ page }) => {
  await signIn(page);
  page.on("dialog", (dialog) => void dialog.accept());
});

/**
 * postie on the plan Mail-e2e, made through the plan form with its four mail fields when it is
 * not there yet (each test may run alone).
 */
async function mailPlan(page: Page) {
  const plans = await (await api("/api/admin/plans", state().adminKey)).json();
  if (!plans.some((one: { name: string }) => one.name === "Mail-e2e")) {
    await page.goto(`${state().baseUrl}/admin/plans/create`);
    await page.getByLabel("Name", { exact: true }).fill("Mail-e2e");
    await page.getByLabel("Mailboxes", { exact: true }).fill("3");
    await page.getByLabel("Mail quota, all mailboxes (MB)").fill("2000");
    await page.getByLabel(/^Mail sent per hour/).fill("100");
    await page.getByLabel(/^Mail sent per day/).fill("1000");
    await page.getByRole("button", { name: "Create", exact: true }).click();
    await expect(page.getByTestId("status-message")).toHaveText("Plan Mail-e2e created.");
  }
  expect((await api(`/api/admin/accounts/${postie}`, state().adminKey, undefined, { method: "PUT", body: { plan: "Mail-e2e" } })).status).toBe(200);
}

test("the plan's mail limits are shown on the tab, and this server says how to run a mail server", async ({ page }) => {
  await mailPlan(page);
  await page.goto(tab());
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Email of “postie”");
  await expect(page.getByRole("navigation", { name: "Account sections" }).locator('[aria-current="page"]')).toHaveText("Email");
  await expect(page.getByTestId("mail-unconfigured")).toContainText("This server runs no mail server: set MAIL_SERVER=1");
  const limits = section(page, "Limits of the plan Mail-e2e");
  await expect(limits.getByTestId("mailbox-count")).toHaveText("0 of 3");
  await expect(limits.getByRole("meter", { name: "Space given to mailboxes" })).toHaveAttribute("aria-valuetext", "0 MB of 2 GB");
  await expect(limits).toContainText("100 messages");
  await expect(limits).toContainText("1,000 messages");
  await expect(section(page, "How to connect")).toContainText("Once the account has a mail domain");
  // No mail server here: no key can be made, so rotating is not offered.
  await expect(page.getByRole("button", { name: /Rotate the DKIM key/ })).toHaveCount(0);
});

test("a mail domain, a mailbox and an alias made through the tab are listed; refusals at their fields; changed; deleted", async ({ page }) => {
  // Some twenty changes, each applied before it answers.
  test.setTimeout(300_000);
  await mailPlan(page);
  await page.goto(tab());
  const domains = section(page, "Mail domains");
  await expect(domains).toContainText("No mail domains yet");

  // A mail domain: nothing chosen is refused at the field, then postie.example.
  await domains.getByLabel("Domain").selectOption("");
  await domains.getByRole("button", { name: "Add mail domain" }).click();
  await expect(page.locator("#domain-error")).toHaveText("Domain is required");
  await domains.getByLabel("Domain").selectOption("postie.example");
  await domains.getByRole("button", { name: "Add mail domain" }).click();
  await expect(page.getByTestId("status-message")).toContainText("Mail domain postie.example added");
  const row = page.getByTestId("mail-domain-postie.example");
  await expect(row.getByTestId("dns-mx")).toContainText("OK");
  await expect(row.getByTestId("dns-spf")).toContainText("OK");
  await expect(row.getByTestId("dns-dmarc")).toContainText("OK");
  await expect(row.getByTestId("dns-dkim")).toContainText("No key");
  // The certificate of its host name (AutoSSL is off on this server: none).
  await expect(row.getByTestId("mail-certificate")).toHaveText("mail.postie.exampleNone");
  await row.getByTestId("dns-mx").locator("summary").click();
  await expect(row.getByTestId("dns-mx")).toContainText("10 mail.postie.example");
  // The domain is offered no more; the other one still is.
  await expect(domains.getByLabel("Domain").locator("option")).toHaveText(["Choose a domain", "postie-shop.example"]);
  const connect = section(page, "How to connect");
  await expect(connect.getByTestId("mail-settings")).toContainText("mail.postie.example, port 993, SSL/TLS");
  await expect(connect.getByTestId("mail-settings")).toContainText("port 587 with STARTTLS or 465 with SSL/TLS");

  // A mailbox: a short password is refused by the form, another account's domain by the server (422).
  await page.getByRole("link", { name: "Add mailbox" }).click();
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Add a mailbox to “postie”");
  await page.getByLabel("Address").fill("info@postie.example");
  await page.getByLabel("Password").fill("short");
  await page.getByLabel("Quota (MB)").fill("500");
  await page.getByRole("button", { name: "Create mailbox" }).click();
  await expect(page.locator("#password-error")).toHaveText("Password must be at least 10 characters");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByLabel("Address").fill("info@alice.example");
  await page.getByRole("button", { name: "Create mailbox" }).click();
  await expect(page.locator("#address-error")).toHaveText("Address is in alice.example, which is not a domain of this account");
  await expect(page.locator("#password-error")).toHaveCount(0);
  // Over the plan's space for all mailboxes: refused at the quota.
  await page.getByLabel("Address").fill("info@postie.example");
  await page.getByLabel("Quota (MB)").fill("2500");
  await page.getByRole("button", { name: "Create mailbox" }).click();
  await expect(page.locator("#quota_mb-error")).toContainText("Quota (MB) would bring the account's mailboxes to 2500 MB; the plan allows 2000 MB in all");
  await page.getByLabel("Quota (MB)").fill("500");
  await page.getByRole("button", { name: "Create mailbox" }).click();
  await expect(page).toHaveURL(tab());
  await expect(page.getByTestId("status-message")).toHaveText("Mailbox info@postie.example created.");
  const mailboxes = section(page, "Mailboxes");
  const mailbox = mailboxes.locator("tbody tr").filter({ hasText: "info@postie.example" });
  await expect(mailbox).toContainText("500 MB");
  await expect(mailbox).toContainText("Enabled");
  await expect(page.getByTestId("mailbox-count")).toHaveText("1 of 3");
  // The password is never shown back, nor its hash.
  await expect(page.locator("body")).not.toContainText(PASSWORD);
  await expect(page.locator("body")).not.toContainText("SHA512-CRYPT");

  // The same address again: the server's 422 at the field.
  await page.goto(`${tab()}/mailboxes/create`);
  await page.getByLabel("Address").fill("info@postie.example");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create mailbox" }).click();
  await expect(page.locator("#address-error")).toHaveText("Address is already a mailbox");
  expect((await (await api("/api/client/email/mailboxes", state().adminKey, "postie")).json()).length).toBe(1);

  // Its quota and enabled changed, and its password (the field starts empty).
  await page.goto(tab());
  await mailbox.getByRole("link", { name: "Edit info@postie.example" }).click();
  await expect(page.getByLabel("New password")).toHaveValue("");
  await page.getByLabel("New password").fill("tiny");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await expect(page.locator("#password-error")).toHaveText("New password must be at least 10 characters");
  await page.getByLabel("New password").fill("another long secret");
  await page.getByLabel("Quota (MB)").fill("800");
  await page.getByLabel("Enabled").uncheck();
  await page.getByRole("button", { name: "Save Changes" }).click();
  await expect(page.getByTestId("status-message")).toHaveText("Mailbox info@postie.example saved with its new password.");
  await expect(mailbox).toContainText("800 MB");
  await expect(mailbox).toContainText("Disabled");
  const [stored] = await (await api("/api/client/email/mailboxes", state().adminKey, "postie")).json();
  expect(stored).toMatchObject({ address: "info@postie.example", quota_mb: 800, enabled: false });

  // An alias to the mailbox and elsewhere; a target of the account's domain that goes nowhere is the server's 422.
  await section(page, "Aliases and catch-alls").getByRole("link", { name: "Add alias" }).click();
  await page.getByLabel("Address").fill("sales@postie.example");
  await page.getByLabel("Forward to").fill("info@postie.example\nnobody@postie.example");
  await page.getByRole("button", { name: "Create alias" }).click();
  await expect(page.locator("#targets-error")).toHaveText("Forward to name nobody@postie.example, which is no mailbox or alias of this account");
  await page.getByLabel("Forward to").fill("info@postie.example, not an@address");
  await page.getByRole("button", { name: "Create alias" }).click();
  await expect(page.locator("#targets-error")).toContainText("“not” must be an address such as name@example.com");
  await page.getByLabel("Forward to").fill("info@postie.example\nboss@example.net");
  await page.getByRole("button", { name: "Create alias" }).click();
  await expect(page.getByTestId("status-message")).toHaveText("Alias sales@postie.example created.");
  // And the domain's catch-all.
  await section(page, "Aliases and catch-alls").getByRole("link", { name: "Add alias" }).click();
  await page.getByLabel("Address").fill("@postie.example");
  await page.getByLabel("Forward to").fill("info@postie.example");
  await page.getByRole("button", { name: "Create alias" }).click();
  await expect(page.getByTestId("status-message")).toHaveText("Catch-all @postie.example created.");
  const aliases = section(page, "Aliases and catch-alls");
  const sales = aliases.locator("tbody tr").filter({ hasText: "sales@postie.example" });
  await expect(sales).toContainText("info@postie.example");
  await expect(sales).toContainText("boss@example.net");
  await expect(aliases.locator("tbody tr").filter({ hasText: "@postie.example (catch-all)" })).toHaveCount(1);
  await page.setViewportSize({ width: 1440, height: 900 });
  await screenshot(page, "account-email");

  // Each list searches on its own: the aliases' search leaves the mailboxes as they are.
  await aliases.getByLabel("Search aliases").fill("boss");
  await expect(page).toHaveURL(/aliases_search=boss/);
  await expect(aliases.locator("tbody tr")).toHaveCount(1);
  await expect(mailboxes.locator("tbody tr")).toHaveCount(1);
  await aliases.getByLabel("Search aliases").fill("");
  await expect(aliases.locator("tbody tr")).toHaveCount(2);

  // Deleted, after the confirmation (accepted by the dialog handler above).
  await sales.getByRole("button", { name: "Delete sales@postie.example" }).click();
  await expect(page.getByTestId("status-message")).toHaveText("Alias sales@postie.example deleted");
  await expect(sales).toHaveCount(0);
  await aliases.locator("tbody tr").filter({ hasText: "@postie.example" }).getByRole("button", { name: "Delete @postie.example" }).click();
  await expect(page.getByTestId("status-message")).toHaveText("Catch-all @postie.example deleted");
  await mailbox.getByRole("button", { name: "Delete info@postie.example" }).click();
  await expect(page.getByTestId("status-message")).toHaveText("Mailbox info@postie.example deleted");
  await expect(mailboxes).toContainText("No mailboxes yet.");
  await expect(aliases).toContainText("No aliases yet.");
  expect(await (await api("/api/client/email/mailboxes", state().adminKey, "postie")).json()).toEqual([]);
  expect(await (await api("/api/client/email/aliases", state().adminKey, "postie")).json()).toEqual([]);
});

test("a dismissed confirmation deletes nothing", async ({ page }) => {
  const made = await api("/api/client/email/mailboxes", state().adminKey, "postie", { method: "POST", body: { address: "kept@postie.example", password: PASSWORD, quota_mb: 100 } });
  expect(made.status).toBe(201);
  page.removeAllListeners("dialog");
  page.on("dialog", (dialog) => void dialog.dismiss());
  await page.goto(tab());
  await section(page, "Mailboxes").getByRole("button", { name: "Delete kept@postie.example" }).click();
  await expect(section(page, "Mailboxes").locator("tbody tr").filter({ hasText: "kept@postie.example" })).toHaveCount(1);
  expect((await (await api("/api/client/email/mailboxes", state().adminKey, "postie")).json()).map((one: { address: string }) => one.address)).toContain(
    "kept@postie.example",
  );
});
