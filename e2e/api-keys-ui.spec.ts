import { type APIRequestContext, expect, type Page } from "@playwright/test";
import { endpointsOfferedTo, offeredCount } from "@/lib/api-keys/endpoints";
import { api, signIn, state, test } from "./support";

// The API keys page as an admin works in it (issue 39, item 1): a secret never in a URL (raw
// HTTP and the browser's own history), limits at a glance, the endpoint picker, a duplicate
// name's warning, the list's place kept across an edit and the pager's "51–60 of 60".

const LIST = "/admin/settings/api-keys";

/** Creates a key through the form; its key and secret as the page shows them once. */
async function createKey(page: Page, name: string, fill?: () => Promise<void>) {
  await page.goto(`${state().baseUrl}${LIST}/create`);
  await page.getByLabel("Name").fill(name);
  await fill?.();
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await expect(page.getByRole("heading", { name: `API key “${name}” created` })).toBeVisible();
  return { key: (await page.getByTestId("created-key").textContent())!, secret: (await page.getByTestId("created-secret").textContent())! };
}

/** Every URL a page's HTML (and the router's payload inside it) names: links, forms, sources. */
const urlsIn = (html: string) => [...html.matchAll(/(?:href|src|action)=["']([^"']*)["']|"(\/admin[^"\\]*)"/g)].map((match) => match[1] ?? match[2]);

/** A signed-in admin over plain HTTP: next-auth's credentials form, as the login page posts it. */
async function signInOverHttp(request: APIRequestContext) {
  const { baseUrl, admin } = state();
  const { csrfToken } = await (await request.get(`${baseUrl}/api/auth/csrf`)).json();
  const response = await request.post(`${baseUrl}/api/auth/callback/credentials`, {
    form: { csrfToken, email: admin.email, password: admin.password, json: "true" },
    maxRedirects: 0,
  });
  expect(response.status()).toBeLessThan(400);
}

test("raw HTTP: no URL the key pages produce holds a secret, and a URL with one finds nothing", async ({ playwright }) => {
  const { baseUrl, adminKey } = state();
  const request = await playwright.request.newContext();
  await signInOverHttp(request);
  const secret = adminKey.secret;
  const pages = [
    LIST,
    `${LIST}?per_page=0`,
    `${LIST}?per_page=5&page=3`,
    `${LIST}?search=${encodeURIComponent("e2e admin key")}`,
    `${LIST}?search=${encodeURIComponent(adminKey.key)}`,
    `${LIST}?search=${encodeURIComponent(secret.slice(0, 4))}`,
    `${LIST}?search=${encodeURIComponent(`${secret.slice(0, 4)}••••••••••••`)}`,
    `${LIST}/create`,
  ];
  let editPage: string | undefined;
  for (const path of pages) {
    const response = await request.get(`${baseUrl}${path}`, { maxRedirects: 0 });
    expect(response.status(), path).toBe(200);
    const html = await response.text();
    expect(html, path).not.toContain(secret);
    for (const url of urlsIn(html)) expect(url, `a URL on ${path}`).not.toContain(secret);
    editPage ??= urlsIn(html).find((url) => /\/admin\/settings\/api-keys\/\d+\/edit/.test(url));
  }
  // The visible start of the secret (as the list shows it, mask and all) finds its key.
  for (const term of [secret.slice(0, 4), `${secret.slice(0, 4)}••••••••••••`]) {
    const html = await (await request.get(`${baseUrl}${LIST}?per_page=0&search=${encodeURIComponent(term)}`)).text();
    expect(html, term).toContain(adminKey.key);
  }
  expect(editPage).toBeDefined();
  const edit = await request.get(`${baseUrl}${editPage!.replaceAll("&amp;", "&")}`);
  expect(edit.status()).toBe(200);
  const editHtml = await edit.text();
  expect(editHtml).not.toContain(secret);
  for (const url of urlsIn(editHtml)) expect(url).not.toContain(secret);

  // A secret typed into the address bar is not searched: the list sends it away, naming nothing.
  const withSecret = await request.get(`${baseUrl}${LIST}?per_page=0&search=${secret}`, { maxRedirects: 0 });
  expect(withSecret.status()).toBe(307);
  expect(withSecret.headers().location).not.toContain(secret);
  expect(new URL(withSecret.headers().location, baseUrl).searchParams.get("search")).toBeNull();
  expect(await withSecret.text()).not.toContain(adminKey.key);
  await request.dispose();
});

test("a pasted secret is looked up by POST: no request URL and no history entry holds it", async ({ page }) => {
  await signIn(page);
  const created = await createKey(page, "Secret lookup");
  const requests: { method: string; url: string; body: string | null }[] = [];
  page.on("request", (request) => requests.push({ method: request.method(), url: request.url(), body: request.postData() }));
  await page.goto(`${state().baseUrl}${LIST}`);
  const search = page.getByLabel("Search by name, key or secret");
  await search.fill(created.secret);
  await expect(page.getByRole("status").filter({ hasText: "This is the secret of the key “Secret lookup”." })).toBeVisible();
  await expect(page.locator("table.data tbody tr")).toHaveCount(1);
  await expect(page.getByRole("link", { name: "Edit Secret lookup" })).toBeVisible();
  await expect(page.getByText("1–1 of 1")).toBeVisible();
  expect(page.url()).not.toContain(created.secret);

  // A secret of no key: said so, still without a URL.
  const unknown = "Zz9".repeat(14) + "q";
  await search.fill(unknown);
  await expect(page.getByText("No key's name, API key or secret matches.")).toBeVisible();

  // The visible start of the secret is an ordinary search, kept in the URL.
  await search.fill(created.secret.slice(0, 4));
  await expect(page).toHaveURL(new RegExp(`search=${created.secret.slice(0, 4)}`));
  await expect(page.getByRole("link", { name: "Edit Secret lookup" })).toBeVisible();

  for (const request of requests) {
    expect(request.url, `${request.method} ${request.url}`).not.toContain(created.secret);
    expect(request.url).not.toContain(unknown);
  }
  const lookups = requests.filter((request) => request.method === "POST" && request.body?.includes(created.secret));
  expect(lookups.length, "the secret went in a POST body").toBeGreaterThan(0);
  const cdp = await page.context().newCDPSession(page);
  const { entries } = (await cdp.send("Page.getNavigationHistory")) as { entries: { url: string }[] };
  expect(entries.length).toBeGreaterThan(1);
  for (const entry of entries) {
    expect(entry.url).not.toContain(created.secret);
    expect(entry.url).not.toContain(unknown);
  }
});

test("the list shows each key's limits at a glance: IP ranges, endpoints of the scope's, Disabled, scope", async ({ page }) => {
  await signIn(page);
  await createKey(page, "Limits at a glance", async () => {
    await page.getByLabel("Enable API Key").uncheck();
    for (const range of ["203.0.113.0/24", "2001:db8::/32"]) {
      await page.getByLabel("IP Restriction").fill(range);
      await page.getByRole("button", { name: "Add" }).click();
    }
    await page.getByLabel("Allow all endpoints").uncheck();
    await page.getByLabel("Who the key acts for").selectOption("account");
    await page.getByLabel("Hosting account").selectOption({ label: "alice" });
    await page.getByLabel("GET /api/client/account", { exact: true }).check();
    await page.getByLabel("GET /api/client/domains", { exact: true }).check();
  });
  await page.goto(`${state().baseUrl}${LIST}?search=Limits`);
  const row = page.locator("table.data tbody tr").filter({ hasText: "Limits at a glance" });
  await expect(row).toContainText("IP: 2 ranges");
  await expect(row).toContainText(`Endpoints: 2 of ${offeredCount("account")}`);
  await expect(row).toContainText("Disabled");
  await expect(row).toContainText("Account alice");
  const open = page.locator("table.data tbody tr").filter({ hasText: "e2e admin key" });
  await page.goto(`${state().baseUrl}${LIST}?search=e2e`);
  await expect(open).toContainText("IP: any address");
  await expect(open).toContainText("Endpoints: all");
  await expect(open).not.toContainText("Disabled");
});

test("the endpoint picker: areas with select-all, a filter, summaries, presets; an account key gets no admin routes", async ({ page }) => {
  await signIn(page);
  await page.goto(`${state().baseUrl}${LIST}/create`);
  await page.getByLabel("Name").fill("Picked endpoints");
  await page.getByLabel("Allow all endpoints").uncheck();
  const all = endpointsOfferedTo("admin").length;
  await expect(page.getByText(`0 of ${all} selected`)).toBeVisible();

  // A group's "All of" box selects its area, and says when part of it is chosen.
  const databases = page.getByRole("group", { name: "Databases", exact: true });
  await databases.getByLabel("All of Databases").check();
  for (const endpoint of ["GET /api/client/databases", "POST /api/client/databases", "GET /api/client/databases/{id}", "DELETE /api/client/databases/{id}"]) {
    await expect(databases.getByLabel(endpoint, { exact: true })).toBeChecked();
  }
  await expect(page.getByText(`4 of ${all} selected`)).toBeVisible();
  await databases.getByLabel("DELETE /api/client/databases/{id}", { exact: true }).uncheck();
  expect(await databases.getByLabel("All of Databases").evaluate((box: HTMLInputElement) => box.indeterminate)).toBe(true);

  // Each operation's summary beside its path; the filter matches paths and summaries.
  const suspend = page.getByLabel("POST /api/admin/accounts/{id}/suspend", { exact: true });
  await expect(suspend).toHaveAccessibleDescription(/Suspend: the account's keys are refused/);
  await page.getByLabel("Filter endpoints").fill("suspend");
  await expect(suspend).toBeVisible();
  await expect(page.getByLabel("GET /api/client/account", { exact: true })).toHaveCount(0);
  await page.getByLabel("Filter endpoints").fill("");

  // Presets.
  await page.getByRole("button", { name: "Billing lifecycle" }).click();
  await expect(page.getByText(`8 of ${all} selected`)).toBeVisible();
  await expect(suspend).toBeChecked();
  await expect(page.getByLabel("GET /api/admin/plans", { exact: true })).toBeChecked();
  await page.getByRole("button", { name: "Read-only" }).click();
  const reads = endpointsOfferedTo("admin").filter((choice) => choice.method === "GET").length;
  await expect(page.getByText(`${reads} of ${all} selected`)).toBeVisible();
  await expect(page.getByLabel("GET /api/metrics/history", { exact: true })).toBeChecked();
  await expect(page.getByLabel("POST /api/client/databases", { exact: true })).not.toBeChecked();

  // An account key: no admin routes offered, and those chosen are taken out, said so.
  await page.getByLabel("Who the key acts for").selectOption("account");
  await expect(page.getByText("Taken out, as this scope cannot reach them:")).toBeVisible();
  await expect(page.getByLabel("GET /api/metrics/history", { exact: true })).toHaveCount(0);
  await expect(page.getByLabel("POST /api/admin/accounts/{id}/suspend", { exact: true })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Billing lifecycle" })).toHaveCount(0);
  const clientReads = endpointsOfferedTo("account").filter((choice) => choice.method === "GET").length;
  await expect(page.getByText(`${clientReads} of ${offeredCount("account")} selected`)).toBeVisible();
  await page.getByLabel("Hosting account").selectOption({ label: "alice" });
  await page.getByRole("button", { name: "Create", exact: true }).click();
  await expect(page.getByRole("heading", { name: "API key “Picked endpoints” created" })).toBeVisible();
  const created = { key: (await page.getByTestId("created-key").textContent())!, secret: (await page.getByTestId("created-secret").textContent())! };
  expect((await api("/api/client/domains", created)).status).toBe(200);
  expect((await api("/api/client/databases", created, undefined, { method: "POST", body: { database_name: "picked" } })).status).toBe(403);
});

test("a name another key has gets a warning, and can still be saved", async ({ page }) => {
  await signIn(page);
  await page.goto(`${state().baseUrl}${LIST}/create`);
  await page.getByLabel("Name").fill("bulk-key-07");
  await expect(page.getByText("Another key is already called “bulk-key-07”.")).toBeVisible();
  await page.getByLabel("Name").fill("Twin integration");
  await expect(page.getByText("Another key is already called")).toHaveCount(0);
  // A key just made with "Create & create another" counts too.
  await page.getByRole("button", { name: "Create & create another" }).click();
  await expect(page.getByRole("heading", { name: "API key “Twin integration” created" })).toBeVisible();
  await page.getByLabel("Name").fill("twin integration ");
  await expect(page.getByText("Another key is already called “Twin integration”.")).toBeVisible();
  // Editing a key does not warn about its own name.
  await page.goto(`${state().baseUrl}${LIST}?search=bulk-key-07`);
  await page.getByRole("link", { name: "Edit bulk-key-07" }).click();
  await expect(page.getByLabel("Name")).toHaveValue("bulk-key-07");
  await expect(page.getByText("Another key is already called")).toHaveCount(0);
});

test("rows per page, the page and the search stay after an edit; the pager says '51–60 of 60'", async ({ page }) => {
  await signIn(page);
  await page.goto(`${state().baseUrl}${LIST}?search=bulk-key-`);
  await expect(page.getByText("1–10 of 60")).toBeVisible();
  await page.getByLabel("Rows per page").selectOption("25");
  await expect(page.getByText("1–25 of 60")).toBeVisible();
  await page.getByRole("button", { name: "Next" }).click();
  await expect(page.getByText("26–50 of 60")).toBeVisible();
  await page.getByRole("button", { name: "Next" }).click();
  await expect(page.getByText("51–60 of 60")).toBeVisible();
  await expect(page).toHaveURL(/page=3/);

  await page.getByRole("link", { name: "Edit bulk-key-05" }).click();
  await expect(page.getByRole("heading", { name: "Edit API key" })).toBeVisible();
  await page.getByRole("button", { name: "Save Changes" }).click();
  await expect(page).toHaveURL(/\/admin\/settings\/api-keys\?search=bulk-key-&page=3&per_page=25$/);
  await expect(page.getByText("51–60 of 60")).toBeVisible();
  await expect(page.getByLabel("Rows per page")).toHaveValue("25");

  await page.getByRole("link", { name: "Edit bulk-key-04" }).click();
  await page.getByRole("link", { name: "Cancel" }).click();
  await expect(page.getByText("51–60 of 60")).toBeVisible();
});
