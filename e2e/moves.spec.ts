import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "@playwright/test";
import { eq, inArray } from "drizzle-orm";
import { hostingAccounts, nodes } from "@/db/schema";
import { createAccount } from "@/lib/accounts/service";
import { createAdminUser } from "@/lib/admins/service";
import { PROTOCOL_VERSION } from "@/lib/agent/protocol";
import { createEnvironment, type TestEnvironment } from "../tests/support/environment";
import { seedActor } from "../tests/support/seed";
import { screenshot, signIn, test } from "./support";

// Moves in the admin UI (docs/nodes.md "Moving accounts"), on a server of its own whose two other
// nodes have joined but whose agents do not run (no NATS here): a move is queued from the
// account's page and waits for its target there, step and reason shown, and is cancelled; a move
// queued behind another is cancelled at once; a node's page drains it, its moves listed.
// tests/api/node-moves.test.ts moves accounts for real.

test.describe.configure({ mode: "serial" });

const password = "correct horse battery";
const moves = fs.mkdtempSync(path.join(os.tmpdir(), "panel-e2e-moves-"));
let env: TestEnvironment<{ moverId: number; n3Id: number; aheadId: number; waiterId: number }>;

test.beforeAll(async () => {
  env = await createEnvironment(
    "pglite",
    async (db) => {
      await createAdminUser(db, { email: "admin@example.com", password }, seedActor);
      const joined = { publicKey: null as string | null, protocolVersion: PROTOCOL_VERSION };
      const [, n3, n4] = await db
        .insert(nodes)
        .values([
          { ...joined, name: "n2", ipv4: "192.0.2.2", publicKey: `U${"A".repeat(55)}` },
          { ...joined, name: "n3", ipv4: "192.0.2.3", publicKey: `U${"B".repeat(55)}` },
          { ...joined, name: "n4", ipv4: "192.0.2.4", publicKey: `U${"C".repeat(55)}` },
        ])
        .returning();
      const mover = await createAccount(db, { username: "mover", domain: "mover.example" }, seedActor);
      // An account of n3 (its records: n3's agent never ran), for the drain.
      const drainee = await createAccount(db, { username: "drainee", domain: "drainee.example" }, seedActor);
      await db.update(hostingAccounts).set({ nodeId: n3.id }).where(eq(hostingAccounts.id, drainee.id));
      // Two accounts of n4: the moves off one node go one after another, so the second waits queued.
      const ahead = await createAccount(db, { username: "ahead", domain: "ahead.example" }, seedActor);
      const waiter = await createAccount(db, { username: "waiter", domain: "waiter.example" }, seedActor);
      await db.update(hostingAccounts).set({ nodeId: n4.id }).where(inArray(hostingAccounts.id, [ahead.id, waiter.id]));
      return { moverId: mover.id, n3Id: n3.id, aheadId: ahead.id, waiterId: waiter.id };
    },
    { MOVE_REPOSITORY: moves },
  );
});

test.afterAll(async () => {
  await env?.teardown();
  fs.rmSync(moves, { recursive: true, force: true });
});

test("an account's page moves it to another node, shows the step it waits at, and cancels it", async ({ page }) => {
  await signIn(page, { baseUrl: env.server.baseUrl, email: "admin@example.com", password });
  await page.goto(`${env.server.baseUrl}/admin/accounts/${env.seed.moverId}/settings`);
  const node = page.getByRole("region", { name: "Node" });
  await expect(node).toContainText("Hosted on local");
  await page.waitForLoadState("networkidle");
  await node.getByLabel("Move to").selectOption("n2");
  await node.getByRole("button", { name: "Move" }).click();
  await expect(page.getByTestId("status-message")).toHaveText("Move to n2 started.");
  const move = node.getByRole("status", { name: "Move" });
  await expect(move).toContainText("Moving from local to n2");
  // n2's agent does not answer: the move waits at its first step, saying why (the page reads itself again).
  await expect(move).toContainText("preparing", { timeout: 20_000 });
  await expect(move).toContainText("waiting for the node n2, which does not answer", { timeout: 20_000 });
  // Its steps so far: queued, with the time it took; preparing has not begun (its node does not answer).
  const steps = node.getByRole("table", { name: "Steps" }).locator("tbody tr");
  await expect(steps).toHaveCount(1);
  await expect(steps.first()).toContainText(/^queued.*\d s$/);
  await screenshot(page, "account-move-waiting");
  await move.getByRole("button", { name: "Cancel the move" }).click();
  await expect(move).toContainText("cancelling");
  await expect(move.getByRole("button", { name: "Cancel the move" })).toHaveCount(0);
  // While it is the move's, the account cannot be suspended.
  await page.getByRole("button", { name: "Actions" }).click();
  await page.getByRole("button", { name: "Suspend…" }).click();
  await page.getByRole("button", { name: /^Suspend \w/ }).click();
  await expect(page.locator("p.alert")).toContainText("moving to another node");
});

test("a node's page drains it: its accounts queued to move to the node chosen, listed with their step", async ({ page }) => {
  await signIn(page, { baseUrl: env.server.baseUrl, email: "admin@example.com", password });
  await page.goto(`${env.server.baseUrl}/admin/nodes/${env.seed.n3Id}/edit`);
  const moves = page.getByRole("region", { name: "Moves" });
  await page.waitForLoadState("networkidle");
  await moves.getByLabel("Drain to").selectOption("local");
  await moves.getByRole("button", { name: "Drain n3" }).click();
  const row = moves.locator("tbody tr").filter({ hasText: "drainee" });
  await expect(row).toContainText("local");
  await expect(row).toContainText(/queued|preparing|copying/);
  await screenshot(page, "node-drain");
  await page.reload();
  await expect(page.getByLabel("New accounts")).toHaveValue("draining");
});

test("a move queued behind another is cancelled at once: the page shows it cancelled and the Move form again", async ({ page }) => {
  await signIn(page, { baseUrl: env.server.baseUrl, email: "admin@example.com", password });
  const moveTo = async (accountId: number, target: string) => {
    await page.goto(`${env.server.baseUrl}/admin/accounts/${accountId}/settings`);
    await page.waitForLoadState("networkidle");
    const node = page.getByRole("region", { name: "Node" });
    await node.getByLabel("Move to").selectOption(target);
    await node.getByRole("button", { name: "Move", exact: true }).click();
    await expect(node.getByRole("status", { name: "Move" })).toContainText(`Moving from n4 to ${target}`);
    return node;
  };
  // n4 does not answer either: its accounts' pages still open (their visitors unavailable), to move them off it.
  // ahead's move starts and waits for n2 (its agent does not run): n4's next move waits behind it.
  await expect((await moveTo(env.seed.aheadId, "n2")).getByRole("status", { name: "Move" })).toContainText("preparing", { timeout: 20_000 });
  const node = await moveTo(env.seed.waiterId, "n2");
  const move = node.getByRole("status", { name: "Move" });
  await expect(move).toContainText("queued — waiting for the moves before it from the same node");
  await screenshot(page, "account-move-queued");
  await move.getByRole("button", { name: "Cancel the move" }).click();
  await expect(move).toHaveCount(0);
  await expect(node.getByLabel("Last move")).toContainText("Last move, to n2: cancelled");
  // The last move's steps: queued, ended by the cancel.
  await expect(node.getByRole("table", { name: "Steps" }).locator("tbody tr")).toHaveText([/^queued.*\d s$/]);
  await expect(node.getByLabel("Move to")).toBeVisible();
  await expect(node.getByRole("button", { name: "Move", exact: true })).toBeEnabled();
  // Read again: the move has ended for good, it is not the page's leftover state.
  await page.reload();
  await expect(node.getByLabel("Last move")).toContainText("cancelled");
  await expect(node.getByRole("status", { name: "Move" })).toHaveCount(0);
});
