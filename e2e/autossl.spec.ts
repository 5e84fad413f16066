import { expect } from "@playwright/test";
import { createAccount, updateAccountProfile } from "@/lib/accounts/service";
import { createAdminUser } from "@/lib/admins/service";
import { type AcmeSites, startAcmeSites } from "../tests/support/acme-sites";
import { createEnvironment, type TestEnvironment } from "../tests/support/environment";
import { makeKey, seedActor } from "../tests/support/seed";
import { screenshot, signIn, test } from "./support";

// The account's certificates in the admin UI, on a server of its own with AutoSSL configured
// (pebble and a test nginx): the domain's certificate status and expiry, and "Renew now" making
// the job issue it again.

test.describe.configure({ mode: "serial" });

const password = "correct horse battery";
let acme: AcmeSites;
let env: TestEnvironment<{ accountId: number; key: { key: string; secret: string } }>;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  acme = await startAcmeSites();
  env = await createEnvironment(
    "pglite",
    async (db) => {
      await createAdminUser(db, { email: "admin@example.com", password }, seedActor);
      const account = await createAccount(db, { username: "carol", domain: "carol.example" }, seedActor);
      await updateAccountProfile(db, account.id, { is_auto_ssl_enabled: true });
      return { accountId: account.id, key: await makeKey(db, { scope: "account", account_id: account.id }) };
    },
    acme.env,
  );
});

test.afterAll(async () => {
  try {
    await env?.teardown();
  } finally {
    await acme?.stop();
  }
});

async function certificateExpiry(): Promise<string | null> {
  const response = await fetch(`${env.server.baseUrl}/api/client/domains`, {
    headers: { "x-api-key": env.seed.key.key, "x-api-secret": env.seed.key.secret },
  });
  const [domain] = await response.json();
  return domain.ssl.status === "active" ? domain.ssl.expires_at : null;
}

test("the account's page shows its certificate; 'Renew now' issues it again", async ({ page }) => {
  // AutoSSL was on before the start: the start-up check issues the certificate.
  await expect.poll(certificateExpiry, { timeout: 30_000 }).not.toBeNull();
  const first = (await certificateExpiry())!;

  await signIn(page, { baseUrl: env.server.baseUrl, email: "admin@example.com", password });

  await page.goto(`${env.server.baseUrl}/admin/accounts/${env.seed.accountId}/certificates`);
  const certificates = page.getByRole("region", { name: "Certificates" });
  await expect(certificates).toContainText("AutoSSL is on");
  const row = certificates.locator("tbody tr").filter({ hasText: "carol.example" });
  await expect(row).toContainText("Active");
  await expect(row).toContainText(first.slice(0, 10));
  await screenshot(page, "account-certificates");

  // pebble's certificates expire a fixed time after issue: a new one has a later expiry.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await row.getByRole("button", { name: "Renew the certificate of carol.example now" }).click();
  await expect.poll(certificateExpiry, { timeout: 30_000 }).not.toBe(first);
  await page.reload();
  await expect(row).toContainText("Active");
});
