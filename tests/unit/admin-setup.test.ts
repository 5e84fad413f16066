import assert from "node:assert/strict";
import { test } from "node:test";
import { countAdminUsers } from "@/lib/admins/service";
import { announceAdminSetup, completeAdminSetup } from "@/lib/admins/setup";
import { AppError } from "@/lib/errors";
import { createTestDatabase, testBackends } from "../support/database";

// The one-time set-up link, in process: a refused admin keeps the link working; of several
// set-ups sent at once with the link, exactly one creates an admin.

for (const backend of testBackends()) {
  test(`the set-up link creates exactly one first admin (${backend})`, async () => {
    const database = await createTestDatabase(backend);
    const connection = await database.open();
    try {
      const { db } = connection;
      const link = (await announceAdminSetup(db))!;
      const token = new URL(link).searchParams.get("token")!;
      const admin = (email: string) => ({ email, password: "a long enough password" });

      await assert.rejects(completeAdminSetup(db, token, { email: "first@example.com", password: "short" }), /10 characters/);
      await assert.rejects(completeAdminSetup(db, "wrong-token", admin("first@example.com")), /not valid/);
      const attempts = await Promise.allSettled(
        ["a", "b", "c", "d", "e"].map((name) => completeAdminSetup(db, token, admin(`${name}@example.com`))),
      );
      assert.equal(attempts.filter((attempt) => attempt.status === "fulfilled").length, 1);
      for (const attempt of attempts) {
        if (attempt.status === "rejected") assert.ok(attempt.reason instanceof AppError && attempt.reason.code === "FORBIDDEN");
      }
      assert.equal(await countAdminUsers(db), 1);
      await assert.rejects(completeAdminSetup(db, token, admin("late@example.com")), /already complete/);
    } finally {
      await connection.close();
      await database.drop();
    }
  });
}
