import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import { Secret, TOTP } from "otpauth";
import type { Connection } from "@/db/client";
import { adminUsers } from "@/db/schema";
import { createAdminUser } from "@/lib/admins/service";
import {
  acceptSecondFactor,
  beginTwoFactorSetup,
  cancelTwoFactorSetup,
  confirmTwoFactorSetup,
  disableOwnTwoFactor,
  renewRecoveryCodes,
  twoFactorStatus,
} from "@/lib/admins/two-factor";
import { AppError } from "@/lib/errors";
import { createTestDatabase, type TestDatabase, testBackends } from "../support/database";

// The two-factor services on each backend: set-up confirmed only by a code of the new secret,
// codes taken once, recovery codes used once, turning it off and making new recovery codes need
// the password and a code, a cancelled set-up confirms nothing.

const PASSWORD = "a long enough password";
const codeAt = (secret: string, offset = 0) =>
  new TOTP({ algorithm: "SHA1", digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offset * 30_000 });
/** A six-digit code that is none of the accepted ones now. */
const wrongCode = (secret: string) => ["000000", "999999", "123456"].find((code) => ![-1, 0, 1].some((offset) => codeAt(secret, offset) === code))!;

async function errorOf(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => assert.fail("expected a refusal"),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof AppError, String(error));
  return error;
}

for (const backend of testBackends()) {
  describe(`two-factor services (${backend})`, () => {
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

    const row = async (id: number) => (await connection.db.select().from(adminUsers).where(eq(adminUsers.id, id)))[0];

    test("set-up is confirmed only by a code of the latest secret; it ends the other sessions and makes ten recovery codes", async () => {
      const db = connection.db;
      const admin = await createAdminUser(db, { email: "setup@example.com", password: PASSWORD }, { type: "system" });
      const first = await beginTwoFactorSetup(db, admin.id);
      const second = await beginTwoFactorSetup(db, admin.id);
      assert.notEqual(first.secret, second.secret);
      assert.match(second.otpauthUri, /^otpauth:\/\/totp\/.*secret=[A-Z2-7]+/);
      assert.match(second.qrSvg, /^<svg/);
      assert.deepEqual((await errorOf(confirmTwoFactorSetup(db, admin.id, { code: wrongCode(second.secret) }))).fieldErrors, {
        code: ["is not correct (check the device's clock)"],
      });
      assert.equal((await twoFactorStatus(db, admin.id)).enabled, false, "a wrong code turns nothing on");
      const generation = (await row(admin.id)).sessionGeneration;
      const { recoveryCodes } = await confirmTwoFactorSetup(db, admin.id, { code: codeAt(second.secret) });
      assert.equal(recoveryCodes.length, 10);
      assert.deepEqual(await twoFactorStatus(db, admin.id), { enabled: true, recoveryCodesLeft: 10 });
      const after = await row(admin.id);
      assert.equal(after.totpSecret, second.secret);
      assert.equal(after.totpPendingSecret, null);
      assert.equal(after.sessionGeneration, generation + 1, "other sessions end");
      assert.equal((await errorOf(beginTwoFactorSetup(db, admin.id))).code, "CONFLICT");
    });

    test("a code is taken once, an earlier step's never after a later one; a recovery code once", async () => {
      const db = connection.db;
      const admin = await createAdminUser(db, { email: "codes@example.com", password: PASSWORD }, { type: "system" });
      const { secret } = await beginTwoFactorSetup(db, admin.id);
      const { recoveryCodes } = await confirmTwoFactorSetup(db, admin.id, { code: codeAt(secret, -1) });
      const withSecret = await row(admin.id);
      assert.equal(await acceptSecondFactor(db, withSecret, codeAt(secret, -1)), false, "the set-up code's step is used");
      assert.equal(await acceptSecondFactor(db, withSecret, codeAt(secret, 0)), true);
      assert.equal(await acceptSecondFactor(db, withSecret, codeAt(secret, 0)), false, "the same code again");
      assert.equal(await acceptSecondFactor(db, withSecret, wrongCode(secret)), false);
      assert.equal(await acceptSecondFactor(db, withSecret, recoveryCodes[0].toLowerCase()), true);
      assert.equal(await acceptSecondFactor(db, withSecret, recoveryCodes[0]), false, "a recovery code once");
      assert.equal((await twoFactorStatus(db, admin.id)).recoveryCodesLeft, 9);
      assert.equal(await acceptSecondFactor(db, { id: admin.id, totpSecret: null }, codeAt(secret, 1)), false, "no secret, no second factor");
    });

    test("turning it off takes the password and a current code; sessions stay", async () => {
      const db = connection.db;
      const admin = await createAdminUser(db, { email: "off@example.com", password: PASSWORD }, { type: "system" });
      const { secret } = await beginTwoFactorSetup(db, admin.id);
      await confirmTwoFactorSetup(db, admin.id, { code: codeAt(secret, -1) });
      const generation = (await row(admin.id)).sessionGeneration;
      assert.deepEqual((await errorOf(disableOwnTwoFactor(db, admin.id, { password: "not it", code: codeAt(secret, 0) }))).fieldErrors, {
        password: ["is not correct"],
      });
      assert.deepEqual((await errorOf(disableOwnTwoFactor(db, admin.id, { password: PASSWORD, code: wrongCode(secret) }))).fieldErrors, {
        code: ["is not correct or was already used"],
      });
      assert.equal((await twoFactorStatus(db, admin.id)).enabled, true);
      await disableOwnTwoFactor(db, admin.id, { password: PASSWORD, code: codeAt(secret, 0) });
      assert.deepEqual(await twoFactorStatus(db, admin.id), { enabled: false, recoveryCodesLeft: 0 });
      assert.equal((await row(admin.id)).sessionGeneration, generation);
      assert.equal((await errorOf(disableOwnTwoFactor(db, admin.id, { password: PASSWORD, code: codeAt(secret, 1) }))).code, "CONFLICT");
    });

    test("a cancelled set-up forgets its secret: a code from it turns nothing on", async () => {
      const db = connection.db;
      const admin = await createAdminUser(db, { email: "cancel@example.com", password: PASSWORD }, { type: "system" });
      const { secret } = await beginTwoFactorSetup(db, admin.id);
      await cancelTwoFactorSetup(db, admin.id);
      assert.equal((await row(admin.id)).totpPendingSecret, null);
      assert.deepEqual((await errorOf(confirmTwoFactorSetup(db, admin.id, { code: codeAt(secret) }))).fieldErrors, {
        code: ["has no set-up to confirm; start the set-up again"],
      });
      assert.equal((await twoFactorStatus(db, admin.id)).enabled, false);
    });

    test("new recovery codes take the password and a current code; the old ones stop working, sessions stay", async () => {
      const db = connection.db;
      const admin = await createAdminUser(db, { email: "renew@example.com", password: PASSWORD }, { type: "system" });
      assert.equal((await errorOf(renewRecoveryCodes(db, admin.id, { password: PASSWORD, code: "123456" }))).code, "CONFLICT", "off: nothing to renew");
      const { secret } = await beginTwoFactorSetup(db, admin.id);
      const { recoveryCodes: old } = await confirmTwoFactorSetup(db, admin.id, { code: codeAt(secret, -1) });
      const generation = (await row(admin.id)).sessionGeneration;
      assert.deepEqual((await errorOf(renewRecoveryCodes(db, admin.id, { password: "not it", code: codeAt(secret, 0) }))).fieldErrors, {
        password: ["is not correct"],
      });
      assert.deepEqual((await errorOf(renewRecoveryCodes(db, admin.id, { password: PASSWORD, code: wrongCode(secret) }))).fieldErrors, {
        code: ["is not correct or was already used"],
      });
      // One of the old recovery codes is proof enough (the device may be the thing that was lost).
      const renewed = await renewRecoveryCodes(db, admin.id, { password: PASSWORD, code: old[0] });
      assert.equal(renewed.length, 10);
      assert.equal(new Set([...renewed, ...old]).size, 20, "all new");
      assert.deepEqual(await twoFactorStatus(db, admin.id), { enabled: true, recoveryCodesLeft: 10 });
      const withSecret = await row(admin.id);
      assert.equal(await acceptSecondFactor(db, withSecret, old[1]), false, "an old code no longer signs in");
      assert.equal(await acceptSecondFactor(db, withSecret, renewed[0]), true);
      assert.equal(withSecret.sessionGeneration, generation);
    });
  });
}
