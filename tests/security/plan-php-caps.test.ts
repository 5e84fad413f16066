import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { addPhpVersion } from "@/lib/php/service";
import { createPlan } from "@/lib/plans/service";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey, seedActor } from "../support/seed";
import { removeLinuxUsers, startWebServers, systemUsersHostingEnv, visitSite, type WebServers } from "../support/web-servers";

// A plan is the provider's wall around a customer: an account on a plan whose PHP uploads stop at
// 16 MB must never run with more — not with the panel's defaults (64 MB) at creation, not after a
// move to a smaller plan — and no settings change of another field may be refused because an
// untouched one sits above the caps. Checked where it matters: PHP's own ini values, and nginx
// refusing a body over the limit, with this file's own nginx and php-fpm.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-plan-caps-"));
fs.chmodSync(root, 0o755);
const username = `pc${randomBytes(4).toString("hex")}`;
const domain = `${username}.example`;
let servers: WebServers;

before(async () => {
  servers = await startWebServers(root);
});
after(async () => {
  await servers?.stop();
  removeLinuxUsers([username]);
  fs.rmSync(root, { recursive: true, force: true });
});

async function seed(db: Database) {
  await createPlan(db, { name: "Small", max_php_upload_mb: 16, max_php_memory_mb: 128 }, seedActor);
  await createPlan(db, { name: "Tiny", max_php_upload_mb: 8, max_php_memory_mb: 64 }, seedActor);
  return { php82: await addPhpVersion(db, { version: "8.2" }, seedActor), adminKey: await makeKey(db, { scope: "admin" }) };
}

const INI = `<?php foreach (["upload_max_filesize", "post_max_size", "memory_limit"] as $name) echo $name, "=", ini_get($name), "\\n";`;

/** What PHP reports once the reloaded pool serves it. */
async function phpIni(expected: string): Promise<string> {
  let last = "";
  for (let attempt = 0; attempt < 50; attempt++) {
    last = (await visitSite(servers, domain, "/ini.php").catch(() => ({ text: "" }))).text;
    if (last === expected) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return last;
}

const ini = (uploadMb: number, memoryMb: number) => `upload_max_filesize=${uploadMb}M\npost_max_size=${uploadMb}M\nmemory_limit=${memoryMb}M\n`;

/** A POST announcing `megabytes` of body: nginx answers 413 from the headers when it is over client_max_body_size. */
function postStatus(megabytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: "127.0.0.1", port: servers.httpPort, method: "POST", path: "/ini.php", headers: { host: domain, "content-length": megabytes * 1024 * 1024 } },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on("error", reject);
    request.flushHeaders();
  });
}

const [backend] = machineBackends("pglite");

describe(`a plan's PHP caps hold for its accounts (${backend})`, () => {
  let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
  let accountId: number;
  before(async () => {
    env = await createEnvironment(backend, seed, systemUsersHostingEnv(servers, root));
  });
  after(async () => {
    await env?.teardown();
  });
  const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
  const client = () => apiClient(env.server.baseUrl, env.seed.adminKey, accountId);

  test("an account made on a 16 MB plan runs with 16 MB uploads, in PHP and in nginx", async () => {
    const created = await admin().post("/api/admin/accounts", { username, domain, plan: "Small" });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    accountId = created.body.id;
    fs.writeFileSync(path.join(root, "home", username, "public_html", "ini.php"), INI);
    const mainDomain = (await client().get("/api/client/domains")).body[0].id;
    const configured = await client().post("/api/client/account/configure-php", { domain_id: mainDomain, php_version_id: env.seed.php82.id });
    assert.equal(configured.status, 200, JSON.stringify(configured.body));
    assert.equal(await phpIni(ini(16, 128)), ini(16, 128));
    const settings = (await client().get("/api/client/php-settings")).body;
    assert.deepEqual([settings.upload_max_filesize_mb, settings.post_max_size_mb, settings.memory_limit_mb], [16, 16, 128]);
    assert.equal(await postStatus(20), 413, "nginx refuses a 20 MB body");
  });

  test("changing another field is never refused for an untouched one", async () => {
    const changed = await client().put("/api/client/php-settings", { memory_limit_mb: 100 });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal(await phpIni(ini(16, 100)), ini(16, 100));
    const over = await client().put("/api/client/php-settings", { upload_max_filesize_mb: 17 });
    assert.equal(over.status, 422, "above the cap is still refused");
    assert.ok(over.body.errors.upload_max_filesize_mb);
  });

  test("a move to a smaller plan lowers the settings into its caps, and the pool and site follow", async () => {
    const moved = await admin().put(`/api/admin/accounts/${accountId}`, { plan: "Tiny" });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal(await phpIni(ini(8, 64)), ini(8, 64));
    const settings = (await client().get("/api/client/php-settings")).body;
    assert.deepEqual([settings.upload_max_filesize_mb, settings.post_max_size_mb, settings.memory_limit_mb], [8, 8, 64]);
    assert.equal(await postStatus(10), 413, "nginx refuses a 10 MB body");
    assert.equal((await client().put("/api/client/php-settings", { max_execution_time_s: 30 })).status, 200);
  });
});
