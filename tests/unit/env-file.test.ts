import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { loadEnvFile, parseEnvFile } from "@/lib/env-file";

// panel.env: what it accepts, what it refuses, and that the environment wins over it.

test("names, values, quotes, comments and blank lines", () => {
  const text = [
    "# the panel's settings",
    "",
    "PORT=3000",
    "  DATA_DIR = /var/lib/panel  ",
    "NGINX_RELOAD_COMMAND=systemctl reload nginx",
    'AUTH_SECRET="a # and spaces, kept"',
    "MYSQL_PROVISION_URL='mysql://root:p\"w@127.0.0.1:3306'",
    "ZONES_DIR=",
    "NODE_ENV=production\r",
  ].join("\n");
  assert.deepEqual(Object.fromEntries(parseEnvFile(text, "panel.env")), {
    PORT: "3000",
    DATA_DIR: "/var/lib/panel",
    NGINX_RELOAD_COMMAND: "systemctl reload nginx",
    AUTH_SECRET: "a # and spaces, kept",
    MYSQL_PROVISION_URL: 'mysql://root:p"w@127.0.0.1:3306',
    ZONES_DIR: "",
    NODE_ENV: "production",
  });
});

test("anything readers disagree on is refused with the file and the line", () => {
  for (const [line, message] of [
    ["export PORT=3000", "expected NAME=value"],
    ["PORT", "expected NAME=value"],
    ["PROT=3000", "unknown setting PROT"],
    ["PORT=3000 # http", "quote the value of PORT"],
    ['AUTH_SECRET="abc', "opens a quote it does not close"],
    ['AUTH_SECRET="a\\"b"', "holds a quote or a backslash inside quotes"],
    ["AUTH_SECRET='it's'", "holds a quote or a backslash inside quotes"],
    ["AUTH_SECRET=it's", "holds a quote; quote the whole value"],
  ]) {
    assert.throws(() => parseEnvFile(`# first\n${line}\n`, "/etc/x.env"), (error: Error) => {
      assert.ok(error.message.startsWith("Invalid configuration file /etc/x.env, line 2: "), `${line}: ${error.message}`);
      assert.ok(error.message.includes(message), `${line}: ${error.message}`);
      return true;
    });
  }
  assert.throws(() => parseEnvFile("PORT=1\nPORT=2\n", "f"), /line 2: PORT is already set on line 1/);
});

test("the environment wins over the file, even with an empty value; the default file may be absent", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-env-file-"));
  try {
    const file = path.join(root, "panel.env");
    fs.writeFileSync(file, "PORT=4000\nDATA_DIR=/from/file\nDATABASE_URL=postgres://file/db\n", { mode: 0o600 });
    const target: Record<string, string | undefined> = { PANEL_ENV_FILE: file, PORT: "5000", DATABASE_URL: "" };
    assert.deepEqual(loadEnvFile(target), { path: file, found: true });
    assert.deepEqual(target, { PANEL_ENV_FILE: file, PORT: "5000", DATABASE_URL: "", DATA_DIR: "/from/file" });

    const cwd = process.cwd();
    process.chdir(root);
    try {
      fs.rmSync(file);
      assert.deepEqual(loadEnvFile({}), { path: file, found: false });
      assert.throws(() => loadEnvFile({ PANEL_ENV_FILE: file }), /Cannot read the configuration file .* \(PANEL_ENV_FILE\): ENOENT/);
    } finally {
      process.chdir(cwd);
    }
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("a file its group or others may read, or another user's, is refused with the command that closes it; /dev/null reads as empty", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-env-file-"));
  try {
    const file = path.join(root, "panel.env");
    fs.writeFileSync(file, "PORT=4000\n");
    for (const mode of [0o644, 0o640, 0o604, 0o660, 0o602]) {
      fs.chmodSync(file, mode);
      assert.throws(() => loadEnvFile({ PANEL_ENV_FILE: file }), (error: Error) => {
        assert.ok(error.message.includes(`chmod 600 ${file}`), error.message);
        return true;
      });
    }
    fs.chmodSync(file, 0o600);
    const target: Record<string, string | undefined> = { PANEL_ENV_FILE: file };
    loadEnvFile(target);
    assert.equal(target.PORT, "4000");
    fs.chownSync(file, 12345, 12345);
    assert.throws(() => loadEnvFile({ PANEL_ENV_FILE: file }), /belongs to uid 12345, who could change what the panel runs: chown/);
    assert.deepEqual(loadEnvFile({ PANEL_ENV_FILE: "/dev/null" }), { path: "/dev/null", found: true });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
