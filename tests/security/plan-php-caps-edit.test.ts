import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { createTestDatabase, machineBackends, type TestDatabase } from "../support/database";

// The provider lowers a plan's PHP caps: every account on the plan runs within the new caps at
// once — its PHP-FPM pool and its nginx site written again — while accounts on other plans keep
// theirs. The services run in this process (the admin UI's plan form calls the same updatePlan),
// writing sites and pools into a directory of their own; nginx's test and reload always pass.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-plan-edit-"));
Object.assign(process.env, {
  WEB_SERVER: "nginx",
  HOME_ROOT: path.join(root, "home"),
  ACCESS_LOG_DIR: path.join(root, "logs"),
  NGINX_SITES_DIR: path.join(root, "sites"),
  NGINX_TEST_COMMAND: "true",
  NGINX_RELOAD_COMMAND: "true",
  NGINX_PID_FILE: "/dev/null",
  PHP_FPM_POOL_DIR: path.join(root, "pools", "{version}"),
  PHP_FPM_SOCKET_DIR: path.join(root, "run"),
});

const [backend] = machineBackends("pglite");
let database: TestDatabase;

before(async () => {
  database = await createTestDatabase(backend);
  Object.assign(process.env, database.env);
});
after(async () => {
  const { connection } = await import("@/db/client");
  await (await connection()).close();
  await database.drop();
  fs.rmSync(root, { recursive: true, force: true });
});

const site = (domain: string) => fs.readFileSync(path.join(root, "sites", `${domain}.conf`), "utf8");
const pool = (username: string) => fs.readFileSync(path.join(root, "pools", "8.2", `panel-${username}.conf`), "utf8");

test(`lowering a plan's upload cap rewrites the pools and sites of its accounts, and only theirs (${backend})`, async () => {
  const { connection, getDb } = await import("@/db/client");
  const { prepareDatabase } = await import("@/db/prepare");
  const { configurePhp, createAccount } = await import("@/lib/accounts/service");
  const { addPhpVersion } = await import("@/lib/php/service");
  const { createPlan, updatePlan } = await import("@/lib/plans/service");
  const { getPhpSettings } = await import("@/lib/php-settings/service");
  await prepareDatabase(await connection());
  const db = await getDb();
  const actor = { type: "system" } as const;
  const plan = await createPlan(db, { name: "Shared", max_php_upload_mb: 32 }, actor);
  const php = await addPhpVersion(db, { version: "8.2" }, actor);
  const capped = await createAccount(db, { username: "capped", domain: "capped.example", plan: "Shared" }, actor);
  const other = await createAccount(db, { username: "other", domain: "other.example" }, actor);
  for (const account of [capped, other]) {
    const [domain] = await db.query.domains.findMany({ where: (domains, { eq }) => eq(domains.accountId, account.id) });
    await configurePhp(db, account.id, { domain_id: domain.id, php_version_id: php.id });
  }
  assert.match(pool("capped"), /php_admin_value\[upload_max_filesize\] = 32M/);
  assert.match(site("capped.example"), /client_max_body_size 32m;/);

  await updatePlan(db, plan.id, { max_php_upload_mb: 4 }, actor);
  assert.match(pool("capped"), /php_admin_value\[upload_max_filesize\] = 4M/);
  assert.match(pool("capped"), /php_admin_value\[post_max_size\] = 4M/);
  assert.match(site("capped.example"), /client_max_body_size 4m;/);
  assert.equal((await getPhpSettings(db, capped.id)).upload_max_filesize_mb, 4);
  assert.match(pool("other"), /php_admin_value\[upload_max_filesize\] = 64M/, "another plan's account keeps its settings");
  assert.match(site("other.example"), /client_max_body_size 64m;/);
});
