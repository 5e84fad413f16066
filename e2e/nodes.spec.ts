import { expect } from "@playwright/test";
import { screenshot, signIn, state, test } from "./support";

// The Nodes page (docs/nodes.md): the panel's own machine is listed; a node is added (its join
// command shown once), refused at its field when its address is wrong, set to draining, and
// revoked behind its name.

test("add a node (join command shown once), a bad address refused at its field, drain, revoke behind its name", async ({ page }) => {
  const { baseUrl } = state();
  await signIn(page);
  await page.goto(`${baseUrl}/admin/nodes`);
  await expect(page.getByRole("cell", { name: "local", exact: true })).toBeVisible();

  await page.getByRole("link", { name: "Add node" }).click();
  await expect(page.getByRole("heading", { name: "Add node" })).toBeVisible();
  await page.waitForLoadState("networkidle");
  await page.getByLabel("Name").fill("web-2");
  await page.getByLabel("Public IPv4").fill("203.0.113.300");
  await page.getByRole("button", { name: "Add node" }).click();
  await expect(page.locator("#ipv4-error")).toContainText("must be an IPv4 address");
  await page.getByLabel("Public IPv4").fill("203.0.113.20");
  await page.getByRole("button", { name: "Add node" }).click();
  const command = page.getByTestId("join-command");
  await expect(command).toContainText("node join --panel");
  await expect(command).toContainText("--token hcp_node_");
  await screenshot(page, "node-added");
  const token = /--token (\S+)/.exec((await command.textContent()) ?? "")![1];
  await page.reload();
  await expect(page.getByText(token)).toHaveCount(0);

  await page.goto(`${baseUrl}/admin/nodes?search=web-2`);
  await expect(page.locator("table.data tbody tr")).toHaveCount(1);
  await expect(page.getByText("waiting to join")).toBeVisible();
  await page.getByRole("link", { name: "Edit web-2" }).click();
  await page.getByLabel("New accounts").selectOption("draining");
  await page.getByRole("button", { name: "Save Changes" }).click();
  await expect(page).toHaveURL(/\/admin\/nodes$/);

  await page.goto(`${baseUrl}/admin/nodes?search=web-2`);
  await page.getByRole("link", { name: "Edit web-2" }).click();
  await expect(page.getByLabel("New accounts")).toHaveValue("draining");
  await page.getByRole("button", { name: "Revoke…" }).click();
  const revoke = page.getByRole("button", { name: "Revoke web-2" });
  await expect(revoke).toBeDisabled();
  await page.getByLabel("Type the node's name to confirm").fill("web-2");
  await revoke.click();
  await expect(page).toHaveURL(/\/admin\/nodes$/);
  await page.goto(`${baseUrl}/admin/nodes?search=web-2`);
  await expect(page.getByText("No node matches")).toBeVisible();
});
