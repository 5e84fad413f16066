import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Connection } from "@/db/client";
import { adminUsers } from "@/db/schema";
import { hashPassword } from "@/lib/admins/password";
import { createAdminUser, setAdminEnabled } from "@/lib/admins/service";
import { createTestDatabase, machineBackends, type TestDatabase } from "../support/database";
import { startServer, type TestServer } from "../support/server";
import { seedActor } from "../support/seed";

// The attacker knows no admin e-mail and wants one: an answer that costs less for an unknown
// e-mail (or a disabled admin) than for a known one gives it away by its timing. And they want the
// panel's threads: dozens of sign-ins at once, each a 32 MiB scrypt in libuv's small pool. Over
// HTTP against a server whose every scrypt is written down (tests/support/count-scrypt.mjs):
// each e-mail costs exactly one scrypt, and only a few ever run at once.

const PASSWORD = "the admins' long password";
const CROWD = 30;
const countFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "panel-scrypt-")), "scrypt.log");
const [backend] = machineBackends("pglite");
let database: TestDatabase;
let server: TestServer;

before(async () => {
  database = await createTestDatabase(backend);
  const connection: Connection = await database.open();
  await createAdminUser(connection.db, { email: "known@example.com", password: PASSWORD }, seedActor);
  const disabled = await createAdminUser(connection.db, { email: "disabled@example.com", password: PASSWORD }, seedActor);
  await setAdminEnabled(connection.db, disabled.id, false, seedActor);
  const passwordHash = await hashPassword(PASSWORD);
  await connection.db.insert(adminUsers).values(Array.from({ length: CROWD }, (_, i) => ({ email: `crowd${i}@example.com`, passwordHash })));
  await connection.close();
  fs.writeFileSync(countFile, "");
  server = await startServer({ ...database.env, TRUSTED_PROXIES: "127.0.0.1/32", SCRYPT_COUNT_FILE: countFile }, [
    "--import",
    path.resolve("tests/support/count-scrypt.mjs"),
  ]);
});
after(async () => {
  await server?.stop();
  await database?.drop();
  fs.rmSync(path.dirname(countFile), { recursive: true, force: true });
});

/** The scrypts the server started so far, and the most that ran at once. */
function scrypts() {
  let started = 0;
  let running = 0;
  let mostRunning = 0;
  for (const line of fs.readFileSync(countFile, "utf8").split("\n")) {
    if (line === "start") {
      started += 1;
      running += 1;
      mostRunning = Math.max(mostRunning, running);
    } else if (line === "end") running -= 1;
  }
  return { started, mostRunning };
}

const cookiesOf = (response: Response) => response.headers.getSetCookie().map((cookie) => cookie.split(";")[0]);

/** The login form's request from `from`: "signed in", "refused" or next-auth's error. */
async function signIn(from: string, email: string, password: string, csrf: { csrfToken: string; cookie: string }) {
  const response = await fetch(`${server.baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrf.cookie, "x-forwarded-for": from },
    body: new URLSearchParams({ csrfToken: csrf.csrfToken, email, password, json: "true" }),
  });
  if (response.headers.getSetCookie().some((cookie) => /next-auth\.session-token=[^;]/.test(cookie))) return "signed in";
  const location = response.headers.get("location") ?? ((await response.json().catch(() => ({}))) as { url?: string }).url ?? "";
  const error = location ? new URL(location, server.baseUrl).searchParams.get("error") : null;
  return !error || error === "CredentialsSignin" ? "refused" : error;
}

async function csrf() {
  const response = await fetch(`${server.baseUrl}/api/auth/csrf`);
  return { csrfToken: ((await response.json()) as { csrfToken: string }).csrfToken, cookie: cookiesOf(response).join("; ") };
}

async function scryptsOf(attempt: () => Promise<unknown>): Promise<number> {
  const before = scrypts().started;
  await attempt();
  return scrypts().started - before;
}

describe(`admin sign-in costs the same for every e-mail, and its scrypt work is bounded (${backend})`, () => {
  test("an unknown e-mail and a disabled admin cost the one scrypt a known e-mail costs", async () => {
    const form = await csrf();
    assert.equal(await scryptsOf(() => signIn("192.0.2.1", "known@example.com", "a wrong password", form)), 1, "known e-mail, wrong password");
    assert.equal(await scryptsOf(() => signIn("192.0.2.2", "nobody@example.com", "a wrong password", form)), 1, "unknown e-mail");
    assert.equal(await scryptsOf(() => signIn("192.0.2.3", "disabled@example.com", PASSWORD, form)), 1, "disabled admin, right password");
    assert.equal(await signIn("192.0.2.4", "disabled@example.com", PASSWORD, form), "refused");
    assert.equal(await signIn("192.0.2.5", "known@example.com", PASSWORD, form), "signed in");
  });

  test("ninety sign-ins at once: at most two scrypts run at a time, the rest wait their turn or are refused at once", async () => {
    const form = await csrf();
    const before = scrypts().started;
    const started = Date.now();
    // Three wrong passwords for each of thirty admins, each from its own address: no throttle
    // stops them before the password check.
    const outcomes = await Promise.all(
      Array.from({ length: 3 * CROWD }, (_, i) => signIn(`198.51.100.${i + 1}`, `crowd${i % CROWD}@example.com`, `wrong ${i}`, form)),
    );
    const { started: after, mostRunning } = scrypts();
    assert.ok(mostRunning <= 2, `${mostRunning} scrypts ran at once`);
    const busy = outcomes.filter((outcome) => /busy/.test(outcome));
    assert.equal(outcomes.filter((outcome) => outcome === "refused").length + busy.length, outcomes.length, outcomes.join(", "));
    assert.ok(busy.length > 0, "a full queue answers at once");
    assert.equal(after - before, outcomes.length - busy.length, "a refused-as-busy attempt costs no scrypt");
    assert.ok(Date.now() - started < 30_000, "nothing hangs");
    assert.equal(await signIn("192.0.2.6", "known@example.com", PASSWORD, form), "signed in", "the queue drained");
  });
});
