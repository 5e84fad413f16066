import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { closeNewFiles } from "@/lib/data-dir";
import { writeLogrotateRules } from "@/lib/provisioning/logrotate";

// Every file the panel writes under DATA_DIR is 0600 (docs/security.md "The panel's data is the
// panel's"): the logrotate rules written at start in DATA_DIR by default were 0644 until issue 36,
// and DATA_DIR's own mode was then their only wall. Seen to fail on the old code (0644, twice).
// Elsewhere (/etc/logrotate.d) they stay 0644, as Debian's own.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-data-dir-modes-"));
const dataDir = path.join(root, "data");
Object.assign(process.env, { DATA_DIR: dataDir, HOME_ROOT: path.join(root, "home"), PANEL_ENV_FILE: "/dev/null" });
closeNewFiles();
after(() => fs.rmSync(root, { recursive: true, force: true }));

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

test("the logrotate rules in DATA_DIR are written 0600, and a 0644 copy an older version left is closed", async () => {
  const file = path.join(dataDir, "logrotate.conf");
  await writeLogrotateRules();
  assert.equal(modeOf(file), 0o600);
  fs.chmodSync(file, 0o644);
  await writeLogrotateRules();
  assert.equal(modeOf(file), 0o600);
  assert.match(fs.readFileSync(file, "utf8"), /copytruncate/);
});
