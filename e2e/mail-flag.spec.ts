import { expect } from "@playwright/test";
import { auditLog } from "@/db/schema";
import { createAccount } from "@/lib/accounts/service";
import { createAdminUser } from "@/lib/admins/service";
import { recordLocalLimitReached } from "@/lib/email/sending";
import { createTestDatabase, type TestDatabase } from "../tests/support/database";
import { startServer, type TestServer } from "../tests/support/server";
import { signIn, test } from "./support";

// An account flagged for its sending limits (docs/email.md "Sending limits"), as the admin finds it: on
// the dashboard among what needs them, then on its Email tab, where "Lift flag" lifts it. A panel
// of its own (PGlite: the flag is raised before its server starts, by the service the policy
// service calls on a refusal).

const PASSWORD = "mail flag password";

test.describe("a flagged account", () => {
  let database: TestDatabase;
  let server: TestServer;
  let accountId: number;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    database = await createTestDatabase("pglite");
    const connection = await database.open();
    const system = { type: "system" } as const;
    await createAdminUser(connection.db, { email: "flags@example.com", password: PASSWORD }, system);
    accountId = (await createAccount(connection.db, { username: "bulkmail", domain: "bulkmail.example" }, system)).id;
    await recordLocalLimitReached(connection.db, { username: "bulkmail", login: "news@bulkmail.example", period: "hour", limit: 20 });
    await connection.close();
    server = await startServer(database.env);
  });

  test.afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  test("is listed on the dashboard, shown on its Email tab, and its flag lifted there", async ({ page }) => {
    page.on("dialog", (dialog) => void dialog.accept());
    await signIn(page, { baseUrl: server.baseUrl, email: "flags@example.com", password: PASSWORD });
    await page.goto(`${server.baseUrl}/admin`);
    const attention = page.getByRole("region", { name: "Needs you now" });
    const item = attention.getByRole("listitem").filter({ hasText: "bulkmail" });
    await expect(item).toContainText("Flagged");
    await expect(item).toContainText("its mail went over the plan's sending limits");

    await item.getByRole("link", { name: "Email" }).click();
    await expect(page).toHaveURL(`${server.baseUrl}/admin/accounts/${accountId}/email`);
    const notice = page.getByTestId("mail-flagged");
    await expect(notice).toContainText("a message of bulkmail was refused for the plan's sending limits at");
    await expect(page.getByTestId("mail-sent-hour")).toHaveText("0 messages (no limit)");

    await notice.getByRole("button", { name: "Lift the mail flag of bulkmail" }).click();
    await expect(page.getByTestId("status-message")).toHaveText("The mail flag of bulkmail is lifted");
    await expect(notice).toHaveCount(0);
    await page.goto(`${server.baseUrl}/admin`);
    await expect(attention.getByRole("listitem").filter({ hasText: "bulkmail" })).toHaveCount(0);

    // Audited, as the admin who lifted it (the panel's own database, read once its server is gone).
    await server.stop();
    const connection = await database.open();
    try {
      const actions = (await connection.db.select().from(auditLog)).filter((row) => row.targetId === accountId).map((row) => [row.action, row.actorType]);
      expect(actions).toEqual(expect.arrayContaining([["hosting_account.mail_flag", "system"], ["hosting_account.mail_unflag", "admin_user"]]));
    } finally {
      await connection.close();
    }
  });
});
