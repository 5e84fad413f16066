import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";

// The second layer of DESIGN.md "Nothing without a session": whatever proxy.ts does, every admin
// page checks the session itself before it reads, and admin code reaches the database only
// through that check (requireAdminSession answers the db). A new page that forgets fails here.

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? files(full) : /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

const adminFiles = files(path.join(process.cwd(), "app", "admin"));

// The two-factor page and its actions are the only ones open to a session that must first set up
// two-factor sign-in (ADMIN_2FA_REQUIRED): they touch nothing but the signed-in admin's own record.
const twoFactorDir = path.join(process.cwd(), "app", "admin", "settings", "two-factor") + path.sep;
// An account's pages check it through accountOfPage (app/admin/accounts/[id]/account-page.ts),
// which itself starts with requireAdminSession (checked below).
const accountPagesDir = path.join(process.cwd(), "app", "admin", "accounts", "[id]") + path.sep;
const sessionCheck = (file: string) =>
  file.startsWith(twoFactorDir) ? "requireAdminSessionForTwoFactor" : file.startsWith(accountPagesDir) ? "(requireAdminSession|accountOfPage)" : "requireAdminSession";

/** The first call `source` awaits from `from` on. */
const firstAwait = (source: string, from: string) => source.slice(source.indexOf(from)).match(/await\s+[\w.]+\(/)?.[0] ?? "";

test("every admin page calls requireAdminSession() before anything else it awaits", () => {
  const pages = adminFiles.filter((file) => /[/\\]page\.tsx?$/.test(file));
  assert.ok(pages.length >= 10, "the admin pages are found");
  for (const page of pages) {
    assert.match(
      firstAwait(fs.readFileSync(page, "utf8"), "export default"),
      new RegExp(`^await\\s+${sessionCheck(page)}\\($`),
      `${path.relative(process.cwd(), page)} starts with await ${sessionCheck(page)}()`,
    );
  }
  const accountPage = fs.readFileSync(path.join(accountPagesDir, "account-page.ts"), "utf8");
  assert.match(firstAwait(accountPage, "export async function accountOfPage"), /^await\s+requireAdminSession\($/, "accountOfPage starts with the session check");
});

test("no admin page, loader or action opens the database on its own", () => {
  for (const file of adminFiles) {
    const source = fs.readFileSync(file, "utf8");
    assert.doesNotMatch(source, /\bgetDb\b|\bconnection\(\)/, `${path.relative(process.cwd(), file)} gets the db from requireAdminSession`);
  }
});

test("every server action under app/admin checks the session before anything else it does", () => {
  const actionFiles = adminFiles.filter((file) => /^\s*["']use server["']/.test(fs.readFileSync(file, "utf8")));
  assert.ok(actionFiles.length >= 5, "the action files are found");
  for (const file of actionFiles) {
    const actions = fs.readFileSync(file, "utf8").split(/^export async function /m).slice(1);
    assert.ok(actions.length, `${path.relative(process.cwd(), file)} exports its actions`);
    for (const action of actions) {
      const name = action.slice(0, action.indexOf("("));
      const firstCall = action.slice(action.indexOf("{")).match(/(?:await|return)\s+[\w.]+\(/)?.[0];
      assert.match(
        firstCall ?? "",
        new RegExp(`^(await\\s+${sessionCheck(file)}|return\\s+runAdminFormAction)\\($`),
        `${path.relative(process.cwd(), file)}: ${name} starts with requireAdminSession() or runAdminFormAction()`,
      );
    }
  }
});
