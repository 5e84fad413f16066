import { expect } from "@playwright/test";
import { nodes } from "@/db/schema";
import { createAdminUser } from "@/lib/admins/service";
import { createTestDatabase, type TestDatabase } from "../tests/support/database";
import { startServer, type TestServer } from "../tests/support/server";
import { signIn, state, test } from "./support";

// The fleet dashboard (issue 39, item 4). A panel of its own with no accounts and two nodes besides
// `local` — one whose agent went silent an hour ago with its homes' disk 95 % full, one added but
// never joined — shows what needs the admin, every node, and "No accounts yet". The suite's
// server, which has sampled for a while, shows the charts: ranges, sampling interval, bit/s.

const PASSWORD = "dashboard password";
const GIB = 1024 ** 3;

test.describe("a panel with nodes in trouble and no accounts", () => {
  let database: TestDatabase;
  let server: TestServer;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    database = await createTestDatabase("pglite");
    const connection = await database.open();
    await createAdminUser(connection.db, { email: "fleet@example.com", password: PASSWORD }, { type: "system" });
    const hourAgo = new Date(Date.now() - 3600_000);
    await connection.db.insert(nodes).values([
      {
        name: "far",
        ipv4: "192.0.2.10",
        publicKey: `U${"A".repeat(55)}`,
        lastHeartbeatAt: hourAgo,
        agentVersion: "0.0.1",
        protocolVersion: 5,
        disk: { total_bytes: 100 * GIB, used_bytes: 95 * GIB },
        load: [0.5, 0.25, 0.125],
      },
      { name: "fresh", ipv4: "192.0.2.11" },
    ]);
    await connection.close();
    server = await startServer({ ...database.env, METRICS_INTERVAL_S: "2" });
  });

  test.afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  test("what needs the admin now, every node with its figures, and 'No accounts yet'", async ({ page }) => {
    await signIn(page, { baseUrl: server.baseUrl, email: "fleet@example.com", password: PASSWORD });
    const attention = page.getByRole("region", { name: "Needs you now" });
    await expect(attention.getByRole("listitem").filter({ hasText: "Unreachable" })).toContainText("Node far: no heartbeat since");
    await expect(attention.getByRole("listitem").filter({ hasText: "Disk 95 % full" })).toContainText("95 GB used of 100 GB");
    await expect(attention.getByRole("listitem").filter({ hasText: "Not joined" })).toContainText("Node fresh was added");
    await expect(attention.getByRole("listitem")).toHaveCount(3);

    const fleet = page.getByRole("region", { name: "Nodes" });
    const row = (name: string) => fleet.locator("tbody tr").filter({ has: page.getByRole("link", { name, exact: true }) });
    await expect(fleet.locator("tbody tr")).toHaveCount(3);
    await expect(row("far")).toContainText("unreachable");
    await expect(row("far")).toContainText("0.50 · 0.25 · 0.13");
    await expect(row("far")).toContainText("95 GB of 100 GB (95 %)");
    await expect(row("far")).toContainText("0.0.1");
    await expect(row("fresh")).toContainText("waiting to join");
    await expect(row("fresh")).toContainText("never");
    // The panel's own machine: measured now, with its real disk and load.
    await expect(row("local")).toContainText("active");
    await expect(row("local")).toContainText("this machine: measured now");
    await expect(row("local")).toContainText(/GB of [\d.,]+ GB \(\d+ %\)/);
    await expect(row("local")).toContainText(/\d+\.\d\d · \d+\.\d\d · \d+\.\d\d/);

    const backups = page.getByRole("region", { name: "Backups" });
    await expect(backups).toContainText("No accounts yet");
    await expect(backups).not.toContainText("All 0 accounts");
  });

  test("a range whose samples fit one point says 'Collecting data', not a lone dot", async ({ page }) => {
    await signIn(page, { baseUrl: server.baseUrl, email: "fleet@example.com", password: PASSWORD });
    await page.goto(`${server.baseUrl}/admin?range=30d`);
    const cpu = page.getByRole("region", { name: "CPU and RAM (%)" });
    await expect(cpu.getByRole("status")).toContainText("Collecting data.");
    await expect(cpu.getByRole("status")).toContainText("A sample is taken every 2 s");
    await expect(cpu.locator("svg.recharts-surface")).toHaveCount(0);
    await expect(page.getByTestId("sampling")).toContainText("Sampled every 2 s; each point averages 6 h");
  });
});

test("the charts: a range picker, the sampling interval, networks in bit/s, disks as used of available", async ({ page }) => {
  await signIn(page);
  const { baseUrl } = state();
  await expect(page.getByRole("link", { name: "1 h", exact: true })).toHaveAttribute("aria-current", "page");
  await expect(page.getByTestId("sampling")).toContainText("Sampled every 2 s; each point averages 30 s");
  // The suite's server samples every 2 s: within the hour the line has points to join.
  await expect(async () => {
    await page.goto(`${baseUrl}/admin?range=1h`);
    await expect(page.getByRole("region", { name: "CPU and RAM (%)" }).locator(".recharts-line").first()).toBeAttached({ timeout: 1000 });
    await expect(page.getByRole("region", { name: "Network (bit/s)" }).locator(".recharts-line").first()).toBeAttached({ timeout: 1000 });
  }).toPass({ timeout: 60_000 });
  await expect(page.getByRole("region", { name: "Network (bit/s)" }).locator(".recharts-cartesian-axis-tick-value").filter({ hasText: /bit\/s/ }).first()).toBeAttached();
  const networks = page.getByRole("region", { name: "Networks now" });
  await expect(networks.locator("tbody tr").first().locator("td").nth(1)).toContainText(/bit\/s$/);

  const disks = page.getByRole("region", { name: "Disks" });
  await expect(disks.getByRole("columnheader", { name: "Used of available" })).toBeVisible();
  await expect(disks.locator("tbody tr").first().locator("td").nth(2)).toHaveText(/^\d+ GB of \d+ GB \(\d+ %\)$/);

  for (const [label, range, bucket] of [["24 h", "24h", "12 min"], ["7 d", "7d", "84 min"], ["30 d", "30d", "6 h"]] as const) {
    await page.getByRole("link", { name: label, exact: true }).click();
    await expect(page).toHaveURL(new RegExp(`range=${range}$`));
    await expect(page.getByRole("link", { name: label, exact: true })).toHaveAttribute("aria-current", "page");
    await expect(page.getByRole("heading", { name: `This machine over the last ${label}` })).toBeVisible();
    await expect(page.getByTestId("sampling")).toContainText(`each point averages ${bucket}`);
  }
});
