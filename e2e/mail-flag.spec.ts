import { expect } from "@playwright/test";
import { eq } from "drizzle-orm";
import { auditLog, hostingAccounts, nodes } from "@/db/schema";
import { createAccount } from "@/lib/accounts/service";
import { createAdminUser } from "@/lib/admins/service";
import { PROTOCOL_VERSION } from "@/lib/agent/protocol";
import { recordLocalLimitReached } from "@/lib/email/sending";
import { createTestDatabase, type TestDatabase } from "../tests/support/database";
import { startServer, type TestServer } from "../tests/support/server";
import { signIn, test } from "./support";

// An account flagged for its sending limits (docs/email.md "Sending limits"), as the admin finds it: on
// the dashboard among what needs them, then on its Email tab, where "Lift flag" lifts it. And the
// Email tab of an account on a node that does not answer: the sending counts are asked of the
// account's machine, so the tab is shown at once and the counts follow (here after
// NODE_JOB_TIMEOUT_S: the panel's NATS server is unreachable). A panel of its own, on PostgreSQL,
// whose database the test changes beside the server; the flag is raised before the server starts,
// by the service the policy service calls on a refusal.

const PASSWORD = "mail flag password";

test.describe("a flagged account, and one on a node that does not answer", () => {
  let database: TestDatabase;
  let server: TestServer;
  let accountId: number;
  let onNodeId: number;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    database = await createTestDatabase("postgres");
    const connection = await database.open();
    const system = { type: "system" } as const;
    await createAdminUser(connection.db, { email: "flags@example.com", password: PASSWORD }, system);
    accountId = (await createAccount(connection.db, { username: "bulkmail", domain: "bulkmail.example" }, system)).id;
    await recordLocalLimitReached(connection.db, { username: "bulkmail", login: "news@bulkmail.example", period: "hour", limit: 20 });
    const [n2] = await connection.db
      .insert(nodes)
      .values({ name: "n2", ipv4: "192.0.2.2", publicKey: `U${"A".repeat(55)}`, protocolVersion: PROTOCOL_VERSION })
      .returning();
    onNodeId = (await createAccount(connection.db, { username: "faraway", domain: "faraway.example" }, system)).id;
    await connection.db.update(hostingAccounts).set({ nodeId: n2.id }).where(eq(hostingAccounts.id, onNodeId));
    await connection.close();
    // Nothing listens on port 9: the panel's NATS connection never opens, so a job waits NODE_JOB_TIMEOUT_S.
    server = await startServer({ ...database.env, NATS_URL: "nats://127.0.0.1:9", NATS_INSECURE: "1", NODE_JOB_TIMEOUT_S: "6" });
  });

  test.afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  test("an account on a node that does not answer: its Email tab is shown at once, and the sending counts follow", async ({ page }) => {
    await signIn(page, { baseUrl: server.baseUrl, email: "flags@example.com", password: PASSWORD });
    // The node takes jobs (a heartbeat just now) but its answers never come. First: the other test stops the server.
    const connection = await database.open();
    try {
      await connection.db.update(nodes).set({ lastHeartbeatAt: new Date() }).where(eq(nodes.name, "n2"));
    } finally {
      await connection.close();
    }
    await page.goto(`${server.baseUrl}/admin/accounts/${onNodeId}/email`, { waitUntil: "commit" });
    await expect(page.getByRole("heading", { name: "Email of “faraway”" })).toBeVisible();
    await expect(page.getByTestId("mail-sent-hour")).toHaveText("asking its server…", { timeout: 3_000 });
    await expect(page.getByTestId("mail-sent-hour")).toHaveText("no limit");
    await expect(page.getByTestId("mail-sent-day")).toHaveText("no limit");
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
