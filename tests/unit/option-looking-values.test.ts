import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { after, before, test } from "node:test";

// Every external program's arguments are data (docs/security.md "Nodes are not trusted"): a value
// that starts with `-` where a name is expected is refused before the program runs, at each call
// site of lib/provisioning that takes one. The programs here are recorders on PATH (and
// RESTIC_BINARY): a call that reached one is written down, and none may be. Seen failing on the
// code before this change: restic, mariadb-dump, mariadb, gpasswd and groupadd were run with the
// values (their recorders wrote them down), and `mysql` passed as a customer database.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-option-values-"));
const bin = path.join(root, "bin");
const calls = path.join(root, "calls.log");
const PROGRAMS = ["restic", "mariadb-dump", "mariadb", "gpasswd", "groupadd", "usermod", "useradd", "userdel", "groupdel", "crontab", "setquota", "tar"];
const savedPath = process.env.PATH;

before(() => {
  fs.mkdirSync(bin);
  for (const program of PROGRAMS) {
    fs.writeFileSync(path.join(bin, program), `#!/bin/sh\necho "${program} $*" >> ${calls}\nexit 0\n`, { mode: 0o755 });
  }
  Object.assign(process.env, {
    PATH: `${bin}:${savedPath}`,
    DATA_DIR: path.join(root, "data"),
    RESTIC_BINARY: path.join(bin, "restic"),
    BACKUP_REPOSITORY: path.join(root, "repository"),
    BACKUP_PASSWORD_FILE: path.join(root, "password"),
    MYSQL_PROVISION_URL: "mysql://root@127.0.0.1:1",
    SYSTEM_USERS: "1",
    HOME_ROOT: path.join(root, "home"),
  });
  fs.mkdirSync(path.join(root, "data"));
  delete (globalThis as { __panelEnv?: unknown }).__panelEnv;
});

after(async () => {
  process.env.PATH = savedPath;
  const { mysqlProvisioner } = await import("@/lib/provisioning/mysql");
  await mysqlProvisioner()?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const recorded = () => (fs.existsSync(calls) ? fs.readFileSync(calls, "utf8") : "");
const ID = "a".repeat(64);
const refused = /read it as an option|not a snapshot id|not an account username|not a valid database or user name|a database of the server itself|username/;

/** `call` is refused, in the panel's words, and no program was run. */
async function refusedBeforeTheCall(what: string, call: () => Promise<unknown>) {
  await assert.rejects(call, refused, what);
  assert.equal(recorded(), "", `${what}: a program ran`);
}

test("restic: an option-looking snapshot id or path never reaches its command line", async () => {
  const { forgetSnapshots, readRecords, restoreDump } = await import("@/lib/provisioning/backup-runs");
  const { snapshotById, snapshotEntry } = await import("@/lib/provisioning/restic");
  const { homeSnapshotEntry } = await import("@/lib/provisioning/home-restore");
  const snapshot = { id: "--option=sftp.command=/bin/sh", short_id: "x", time: "", paths: ["/db.sql"] };
  await refusedBeforeTheCall("forget", () => forgetSnapshots({ ids: ["--prune"] }));
  await refusedBeforeTheCall("dump of the records", () => readRecords({ snapshot_id: "--help" }));
  await refusedBeforeTheCall("dump of a database", () => restoreDump({ snapshot, database: "shop", into: "shop" }));
  await refusedBeforeTheCall("snapshots by id", () => snapshotById("-x"));
  await refusedBeforeTheCall("ls", () => snapshotEntry("--json", "/home"));
  await refusedBeforeTheCall("ls of a path", () => snapshotEntry(ID, "--option=sftp.command=/bin/sh"));
  await refusedBeforeTheCall("dump of a tree path", () => homeSnapshotEntry("alice", { snapshotId: ID, format: "tree", path: "--option=sftp.command=/bin/sh" }));
});

test("mariadb-dump and mariadb: an option-looking or system database is refused", async () => {
  const { loadDatabaseDump, startDatabaseDump, mysqlProvisioner } = await import("@/lib/provisioning/mysql");
  for (const database of ["-x", "--defaults-file=/etc/shadow", "mysql", "information_schema", "performance_schema", "sys", "MySQL"]) {
    await refusedBeforeTheCall(`dump of ${database}`, () => startDatabaseDump(database));
    await refusedBeforeTheCall(`load into ${database}`, () => loadDatabaseDump(database, Readable.from([""])));
  }
  const server = mysqlProvisioner()!;
  for (const call of [() => server.createDatabase("mysql"), () => server.dropDatabase("sys"), () => server.grant("alice_u", "mysql", ["ALL PRIVILEGES"])]) {
    await assert.rejects(async () => call(), /a database of the server itself/);
  }
});

test("user tools: an option-looking user or group is refused", async () => {
  const homes = await import("@/lib/provisioning/homes");
  const { installCrontab } = await import("@/lib/provisioning/crontab");
  await refusedBeforeTheCall("gpasswd --add", () => homes.addGroupMember("panel-no-such-group", "-r"));
  await refusedBeforeTheCall("gpasswd --members", () => homes.setGroupMembers("-r", []));
  await refusedBeforeTheCall("groupadd", () => homes.ensureGroup("-g"));
  await refusedBeforeTheCall("usermod --groups", () => homes.setSupplementaryGroups("alice", ["-x"]));
  await refusedBeforeTheCall("usermod --shell", () => homes.setLoginShell("-x", "/bin/sh"));
  await refusedBeforeTheCall("useradd", () => homes.createSystemUser("-o", "/home/x", "/bin/sh"));
  await refusedBeforeTheCall("userdel", () => homes.removeSystemUser("-r"));
  await refusedBeforeTheCall("crontab", () => installCrontab("-r", "", 0));
});

test("operand: empty, option-looking and NUL values are refused, names pass", async () => {
  const { operand } = await import("@/lib/provisioning/system");
  for (const value of ["", "-", "-x", "--x", "a\0b"]) assert.throws(() => operand("a name", value), /read it as an option/);
  for (const value of ["alice", "/dev/fd/3/x", "a-b", "."]) assert.equal(operand("a name", value), value);
});
