import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { and, desc, eq } from "drizzle-orm";
import type { Connection } from "@/db/client";
import { auditLog } from "@/db/schema";
import { suspendAccount, unsuspendAccount } from "@/lib/accounts/lifecycle";
import { ADMIN } from "@/lib/accounts/manager";
import { createAccount, getAccount, listAccountsPage, updateAccountAdminFields } from "@/lib/accounts/service";
import { AppError } from "@/lib/errors";
import { addPhpVersion, listPhpVersionsPage, updatePhpVersion } from "@/lib/php/service";
import { createPlan, listPlansPage, updatePlan } from "@/lib/plans/service";
import { createReseller, listResellersPage, updateReseller } from "@/lib/resellers/service";
import { createTestDatabase, type TestDatabase, testBackends } from "../support/database";

// The services behind the admin pages for accounts, plans, resellers and PHP versions, called
// directly on each backend.

const actor = { type: "admin_user", id: 1 } as const;

/** The field errors of a service's validation failure (fails the test for anything else). */
async function fieldErrorsOf(promise: Promise<unknown>) {
  const error = await promise.then(
    () => assert.fail("expected a validation error"),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof AppError && error.code === "VALIDATION", String(error));
  return error.fieldErrors;
}

for (const backend of testBackends()) {
  describe(`admin services: accounts, plans, resellers, PHP versions (${backend})`, () => {
    let database: TestDatabase;
    let connection: Connection;
    before(async () => {
      database = await createTestDatabase(backend);
      connection = await database.open();
    });
    after(async () => {
      await connection?.close();
      await database?.drop();
    });

    test("admin fields: plan, reseller, SSH access and email change together, audited", async () => {
      const { db } = connection;
      await createPlan(db, { name: "gold", max_databases: 10 }, actor);
      await createReseller(db, { username: "shop_reseller" }, actor);
      const account = await createAccount(db, { username: "carol", domain: "carol.example" }, actor);
      const updated = await updateAccountAdminFields(
        db,
        account.id,
        { plan: "gold", reseller: "shop_reseller", has_ssh_access: true, email: "carol@example.com" },
        actor,
      );
      assert.equal(updated.plan.name, "gold");
      assert.equal(updated.plan.max_databases, 10);
      assert.notEqual(updated.reseller_id, null);
      assert.equal(updated.has_ssh_access, true);
      assert.equal(updated.email, "carol@example.com");
      const [audit] = await db
        .select()
        .from(auditLog)
        .where(and(eq(auditLog.action, "hosting_account.update"), eq(auditLog.targetId, account.id)))
        .orderBy(desc(auditLog.id));
      assert.deepEqual(Object.keys(audit.details ?? {}).sort(), ["email", "hasSshAccess", "planId", "resellerId"]);

      const back = await updateAccountAdminFields(db, account.id, { reseller: null }, actor);
      assert.equal(back.reseller_id, null);
      assert.equal(back.plan.name, "gold", "a field left out keeps its value");
    });

    test("suspending or reactivating bumps auth_generation; an SSH-only change does not", async () => {
      const { db } = connection;
      const account = await createAccount(db, { username: "dave", domain: "dave.example" }, actor);
      const before = await connection.readAuthGeneration();
      await suspendAccount(db, ADMIN, account.id, "unpaid", actor);
      const suspended = await connection.readAuthGeneration();
      assert.ok(suspended! > before!, "suspension invalidates every instance's auth cache");
      await updateAccountAdminFields(db, account.id, { has_ssh_access: true }, actor);
      assert.equal(await connection.readAuthGeneration(), suspended);
      await unsuspendAccount(db, ADMIN, account.id, actor);
      assert.ok((await connection.readAuthGeneration())! > suspended!);
    });

    test("an unknown plan or reseller is a 422 at its field; nothing changes", async () => {
      const { db } = connection;
      const account = await createAccount(db, { username: "erin", domain: "erin.example" }, actor);
      assert.deepEqual(Object.keys((await fieldErrorsOf(updateAccountAdminFields(db, account.id, { plan: "nope" }, actor)))!), ["plan"]);
      const resellerErrors = await fieldErrorsOf(
        updateAccountAdminFields(db, account.id, { reseller: "nobody", has_ssh_access: true }, actor),
      );
      assert.deepEqual(Object.keys(resellerErrors!), ["reseller"]);
      assert.equal((await getAccount(db, account.id)).has_ssh_access, false);
      await assert.rejects(updateAccountAdminFields(db, 999_999, { has_ssh_access: true }, actor), /not found/);
    });

    test("a plan update keeps the quotas it leaves out; duplicate names and renaming default are 422 at name", async () => {
      const { db } = connection;
      const plan = await createPlan(db, { name: "silver", max_databases: 3, disk_mb: 500 }, actor);
      const renamed = await updatePlan(db, plan.id, { name: "silver2" }, actor);
      assert.equal(renamed.max_databases, 3);
      assert.equal(renamed.disk_mb, 500);
      const unlimited = await updatePlan(db, plan.id, { max_databases: null }, actor);
      assert.equal(unlimited.max_databases, null);
      assert.deepEqual(Object.keys((await fieldErrorsOf(updatePlan(db, plan.id, { name: "default" }, actor)))!), ["name"]);
      const { rows } = await listPlansPage(db, { search: "default" });
      assert.deepEqual(Object.keys((await fieldErrorsOf(updatePlan(db, rows[0].id, { name: "basic" }, actor)))!), ["name"]);
      assert.equal((await updatePlan(db, rows[0].id, { disk_mb: 1000 }, actor)).disk_mb, 1000);
    });

    test("a reseller is renamed; a taken name is a 422 at username", async () => {
      const { db } = connection;
      const first = await createReseller(db, { username: "first" }, actor);
      await createReseller(db, { username: "second" }, actor);
      assert.equal((await updateReseller(db, first.id, { username: "Primary" }, actor)).username, "primary");
      assert.deepEqual(Object.keys((await fieldErrorsOf(updateReseller(db, first.id, { username: "second" }, actor)))!), ["username"]);
    });

    test("a PHP version is edited; a duplicate is a 422 at version", async () => {
      const { db } = connection;
      const php = await addPhpVersion(db, { version: "8.2" }, actor);
      await addPhpVersion(db, { version: "8.10" }, actor);
      assert.equal((await updatePhpVersion(db, php.id, { version: "8.3" }, actor)).version, "8.3");
      assert.deepEqual(Object.keys((await fieldErrorsOf(updatePhpVersion(db, php.id, { version: "8.10" }, actor)))!), ["version"]);
      const { rows } = await listPhpVersionsPage(db, {});
      assert.deepEqual(
        rows.map((row) => row.version),
        ["8.3", "8.10"],
        "numeric order",
      );
    });

    test("admin lists: search, page, page size, and counts of accounts", async () => {
      const { db } = connection;
      await createReseller(db, { username: "counted" }, actor);
      for (const name of ["lista", "listb", "listc"]) {
        await createAccount(db, { username: name, domain: `${name}.example`, reseller: "counted" }, actor);
      }
      const page = await listAccountsPage(db, { search: "list", per_page: 0 });
      assert.equal(page.total, 3);
      assert.deepEqual(page.rows.map((row) => row.reseller_username), ["counted", "counted", "counted"]);
      const second = await listAccountsPage(db, { search: "list", page: 2, per_page: 5 });
      assert.equal(second.total, 3);
      assert.equal(second.rows.length, 0);
      assert.equal((await listAccountsPage(db, { search: "listb.example" })).rows[0].username, "listb");
      const resellers = await listResellersPage(db, { search: "counted" });
      assert.equal(resellers.rows[0].account_count, 3);
      assert.equal((await listResellersPage(db, { search: "%" })).total, 0, "wildcards are literal");
    });
  });
}
