import assert from "node:assert/strict";
import { test } from "node:test";
import { createMysqlProvisioner } from "@/lib/provisioning/mysql";
import { isSystemDatabase } from "@/lib/provisioning/rules";

// The server's own schemas (and the panel's) are never a customer's database (docs/security.md
// "The panel adopts nothing it did not make"): refused by name, whatever their case, before
// anything reaches the server — the provisioner here points at a port where nothing listens, so a
// call that got as far as the server would fail differently. On the code before, `mysql` passed
// every check (isSystemDatabase did not exist; this file failed to load).

const SYSTEM = ["mysql", "MySQL", "information_schema", "INFORMATION_SCHEMA", "performance_schema", "sys", "hosting-panel"];

test("isSystemDatabase: the server's schemas and the panel's, in any case; a customer's name is not", () => {
  for (const name of SYSTEM) assert.equal(isSystemDatabase(name), true, name);
  for (const name of ["alice_shop", "mysqlx", "sys_user_db", "a_mysql"]) assert.equal(isSystemDatabase(name), false, name);
});

test("every call that names a database refuses a system one before it reaches the server", async () => {
  const server = createMysqlProvisioner("mysql://root@127.0.0.1:1", "localhost");
  try {
    for (const name of SYSTEM.filter((candidate) => /^[A-Za-z0-9_]+$/.test(candidate))) {
      const calls: [string, () => Promise<unknown>][] = [
        ["createDatabase", () => server.createDatabase(name)],
        ["dropDatabase", () => server.dropDatabase(name)],
        ["grant", () => server.grant("alice_app", name, ["ALL PRIVILEGES"])],
        ["revoke", () => server.revoke("alice_app", name)],
        ["databaseObjects", () => server.databaseObjects(name)],
      ];
      for (const [call, run] of calls) await assert.rejects(run, /system database/, `${call}(${name})`);
    }
  } finally {
    await server.close();
  }
});
