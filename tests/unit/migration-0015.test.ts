import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";

// Migration 0015 gives every admin key an owner, on a database of before it: a key an admin made
// stays theirs, a command-line key becomes the first admin's (whom SSO signed in with it), a key
// whose maker was removed (SET NULL left it ownerless) goes, and reseller and account keys have
// no owner. On the machine's PostgreSQL, migrated to 0014 first with a copy of the journal.

const adminUrl = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const name = `panel_migration_${process.pid}_${randomBytes(3).toString("hex")}`;
const folder = fs.mkdtempSync(path.join(os.tmpdir(), "panel-migrations-"));
let client: postgres.Sql;

before(async () => {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  client = postgres(url.toString(), { max: 1, onnotice: () => {} });
});
after(async () => {
  await client?.end();
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name}`);
  await admin.end();
  fs.rmSync(folder, { recursive: true, force: true });
});

test("0015: admin keys get their owner; a removed admin's keys go; command-line keys become the first admin's", async () => {
  const real = path.join(process.cwd(), "db", "migrations");
  fs.cpSync(real, folder, { recursive: true });
  const journalPath = path.join(folder, "meta", "_journal.json");
  const journal = JSON.parse(fs.readFileSync(journalPath, "utf8")) as { entries: { tag: string }[] };
  journal.entries = journal.entries.filter((entry) => entry.tag < "0015");
  fs.writeFileSync(journalPath, JSON.stringify(journal));
  const db = drizzle(client);
  await migrate(db, { migrationsFolder: folder });

  const [first] = await client`insert into admin_users (email, password_hash) values ('first@example.com', 'x') returning id`;
  const [second] = await client`insert into admin_users (email, password_hash) values ('second@example.com', 'x') returning id`;
  const [reseller] = await client`insert into resellers (username) values ('res') returning id`;
  const key = async (label: string, scope: string, createdBy: number | null, resellerId: number | null = null) => {
    const [row] = await client`
      insert into api_keys (name, key, secret_hash, secret_start, scope, reseller_id, created_by_admin_id)
      values (${label}, ${`hcp_${label}`}, ${`hash ${label}`}, 'abcd', ${scope}::api_key_scope, ${resellerId}, ${createdBy})
      returning id`;
    return row.id as number;
  };
  const seconds = await key("seconds", "admin", second.id);
  const operators = await key("operators", "admin", null);
  await client`insert into audit_log (actor_type, action, target_type, target_id) values ('cli', 'api_key.create', 'api_key', ${operators})`;
  const orphan = await key("orphan", "admin", null);
  await client`insert into audit_log (actor_type, actor_id, action, target_type, target_id) values ('admin_user', 999, 'api_key.create', 'api_key', ${orphan})`;
  const resellers = await key("resellers", "reseller", second.id, reseller.id);

  await migrate(db, { migrationsFolder: real });
  const owners = new Map((await client`select id, owner_admin_id from api_keys`).map((row) => [row.id as number, row.owner_admin_id as number | null]));
  assert.equal(owners.get(seconds), second.id, "an admin's key stays theirs");
  assert.equal(owners.get(operators), first.id, "a command-line key is the first admin's, as SSO had it");
  assert.equal(owners.has(orphan), false, "a key whose maker was removed is gone");
  assert.equal(owners.get(resellers), null, "a reseller key has no owner");

  await client`delete from admin_users where id = ${second.id}`;
  assert.deepEqual((await client`select id from api_keys where id = ${seconds}`).length, 0, "removing an admin removes their keys");
  assert.equal((await client`select id from api_keys where id = ${resellers}`).length, 1, "and not the reseller's");
  await assert.rejects(client`update api_keys set owner_admin_id = ${first.id} where id = ${resellers}`, /api_keys_owner_admin_scope/);
});
