import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { AppError } from "@/lib/errors";
import { applySshdConfig, renderAuthorizedKeys, renderSshdConfig } from "@/lib/provisioning/openssh";
import { parsePublicKey } from "@/lib/ssh/public-key";

// The OpenSSH side of customer file access without a running server: the public key check
// against ssh-keygen's own reading, the renderers' refusals of hostile stored values (they are
// fed directly, as a value written to the database by hand would reach them), and the drop-in
// tested by the real `sshd -t` before it is kept.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-openssh-"));
const dropIn = path.join(root, "panel.conf");
const mainConfig = path.join(root, "sshd_config");
const reloaded = path.join(root, "reloaded");
execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path.join(root, "host_key")]);
fs.writeFileSync(mainConfig, `Include ${dropIn}\nHostKey ${root}/host_key\nUsePAM no\n`);
Object.assign(process.env, {
  SYSTEM_USERS: "1",
  // Outside DATA_DIR, as the panel requires with Linux users (no home is made here).
  HOME_ROOT: path.join(root, "home"),
  SSH_SERVER: "openssh",
  SSHD_CONFIG_FILE: dropIn,
  SSHD_TEST_COMMAND: `/usr/sbin/sshd -t -f ${mainConfig}`,
  SSHD_RELOAD_COMMAND: `touch ${reloaded}`,
  SSH_KEYS_DIR: path.join(root, "keys"),
});
after(() => fs.rmSync(root, { recursive: true, force: true }));

const settings = { sftpGroup: "panel-sftp", shellGroup: "panel-shell", keysDir: "/etc/ssh/panel-keys" };

test("parsePublicKey reads every accepted type as ssh-keygen does (same SHA256 fingerprint), and drops the comment", () => {
  for (const [type, bits] of [["ed25519"], ["ecdsa", "256"], ["ecdsa", "384"], ["ecdsa", "521"], ["rsa", "2048"], ["rsa", "4096"]] as const) {
    const file = path.join(root, `user-${type}-${bits ?? ""}`);
    execFileSync("ssh-keygen", ["-q", "-t", type, ...(bits ? ["-b", bits] : []), "-N", "", "-C", "me@laptop", "-f", file]);
    const line = fs.readFileSync(`${file}.pub`, "utf8");
    const expected = execFileSync("ssh-keygen", ["-l", "-f", `${file}.pub`], { encoding: "utf8" }).split(" ")[1];
    const key = parsePublicKey(line);
    assert.equal(key.fingerprint, expected, `${type} ${bits ?? ""}`);
    assert.equal(`${key.type} ${key.data}`, line.trim().replace(/ me@laptop$/, ""));
  }
});

test("parsePublicKey refuses options, a second line, short RSA, wrong or broken data, other types", () => {
  const file = path.join(root, "short-rsa");
  execFileSync("ssh-keygen", ["-q", "-t", "rsa", "-b", "1024", "-N", "", "-f", file]);
  const ed = fs.readFileSync(path.join(root, "user-ed25519-.pub"), "utf8").trim();
  const ecdsa = fs.readFileSync(path.join(root, "user-ecdsa-256.pub"), "utf8").trim();
  const [, edData] = ed.split(" ");
  const offCurve = Buffer.from(ecdsa.split(" ")[1], "base64");
  offCurve[offCurve.length - 1] ^= 0xff; // y no longer on the curve
  const cases: [string, RegExp][] = [
    [`command="/bin/sh" ${ed}`, /options/],
    [`restrict ${ed}`, /key type/],
    [`${ed}\nssh-ed25519 ${edData}`, /one line/],
    [fs.readFileSync(`${file}.pub`, "utf8"), /at least 2048 bits/],
    [`ssh-rsa ${edData}`, /not a ssh-rsa key/],
    ["ssh-ed25519 AAAA$$$$", /not base64/],
    [`ssh-ed25519 ${Buffer.concat([Buffer.from(edData, "base64"), Buffer.from([0, 0, 0, 0])]).toString("base64")}`, /after the key/],
    [`ecdsa-sha2-nistp256 ${offCurve.toString("base64")}`, /not a valid/],
    ["ssh-dss AAAAB3NzaC1kc3MAAACBAP", /key type/],
  ];
  for (const [line, why] of cases) assert.throws(() => parsePublicKey(line), why, JSON.stringify(line));
  // A .pub file's own line break around the line is fine; only one inside it is refused.
  assert.equal(parsePublicKey(`${ed}\r\n`).data, edData);
});

test("renderSshdConfig: both groups read their keys from the keys directory; the SFTP group is chrooted to SFTP; nothing forwarded", () => {
  const text = renderSshdConfig(settings);
  const blocks = text.split(/^Match /m).slice(1);
  assert.deepEqual(blocks.map((block) => block.split("\n")[0]), ["Group panel-shell", "Group panel-sftp", "all"]);
  for (const block of blocks.slice(0, 2)) {
    assert.match(block, /AuthorizedKeysFile \/etc\/ssh\/panel-keys\/%u\n/);
    assert.match(block, /AllowTcpForwarding no\n/);
    assert.match(block, /AllowAgentForwarding no\n/);
  }
  assert.match(blocks[1], /ChrootDirectory %h\n\s+ForceCommand internal-sftp\n/);
  assert.doesNotMatch(blocks[0], /Chroot|ForceCommand/);
});

test("renderSshdConfig and renderAuthorizedKeys refuse hostile stored values", () => {
  for (const group of ["a b", "x\nMatch all", "-x", "", "grp;", "a\"b"]) {
    assert.throws(() => renderSshdConfig({ ...settings, sftpGroup: group }), /sshd drop-in: refused the SFTP group/);
    assert.throws(() => renderSshdConfig({ ...settings, shellGroup: group }), /sshd drop-in: refused the shell group/);
  }
  assert.throws(() => renderSshdConfig({ ...settings, keysDir: "relative/keys" }), /keys directory/);
  assert.throws(() => renderSshdConfig({ ...settings, keysDir: "/etc/ssh/keys\nForceCommand /bin/sh" }), /keys directory/);
  const good = { id: 1, type: "ssh-ed25519", data: "AAAAC3NzaC1lZDI1NTE5AAAAIBm1" };
  for (const data of [`${good.data}\ncommand="sh" ${good.type} ${good.data}`, `${good.data} x`, "", "AAAA\"", "AAA=="]) {
    assert.throws(() => renderAuthorizedKeys([{ ...good, data }], false), /authorized keys file: refused the key data/);
  }
  for (const type of ['command="sh" ssh-ed25519', "ssh-dss", "ssh-ed25519\n"]) {
    assert.throws(() => renderAuthorizedKeys([{ ...good, type }], false), /authorized keys file: refused the key type/);
  }
  assert.equal(renderAuthorizedKeys([good], false).split("\n").filter((line) => line.startsWith("ssh-")).length, 1);
  assert.equal(renderAuthorizedKeys([good], true).split("\n").filter((line) => line.startsWith("ssh-")).length, 0, "suspended: no key");
});

test("applySshdConfig keeps a drop-in sshd -t accepts and reloads; a refused one → 422 and the previous file back, no reload", async () => {
  // sshd -t wants its privilege separation directory, which only a started sshd service makes.
  fs.mkdirSync("/run/sshd", { recursive: true, mode: 0o755 });
  const accepted = renderSshdConfig(settings);
  assert.equal(await applySshdConfig(accepted), true);
  assert.equal(fs.readFileSync(dropIn, "utf8"), accepted);
  assert.ok(fs.existsSync(reloaded), "reloaded");
  fs.rmSync(reloaded);
  assert.equal(await applySshdConfig(accepted), false, "unchanged: nothing written");
  await assert.rejects(applySshdConfig(`${accepted}NotAnOption yes\n`), (error: unknown) => {
    assert.ok(error instanceof AppError && error.code === "VALIDATION", String(error));
    assert.match(error.message, /sshd refused the new configuration/);
    return true;
  });
  assert.equal(fs.readFileSync(dropIn, "utf8"), accepted, "the previous drop-in is back");
  assert.equal(fs.existsSync(reloaded), false, "no reload of a refused configuration");
  fs.rmSync(dropIn);
  await assert.rejects(applySshdConfig("Match Group\n"));
  assert.equal(fs.existsSync(dropIn), false, "a first drop-in refused is removed");
});
