import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Database } from "@/db/client";
import { asUser, backupPanelEnv, backUp } from "../support/backups";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { makeKey } from "../support/seed";
import { makeChrootableRoot } from "../support/ssh-server";
import { removeLinuxUsers } from "../support/web-servers";

// Attack: the customer's own backups made to read what root can (issue 29, item 1, the backup's
// half). While backups of her account run, alice — as her Linux user — loops swapping two
// folders of her home for links (`mv a a.real; ln -s TARGET a`, and back): one to a root
// directory outside the homes whose files (same names as hers) are root's, 0600, and one to a
// folder of her neighbour bob's home, which she cannot enter. A backup that walks her home as
// root, by path, lists her folder and then opens `a/f7` through the link: root's file, or bob's,
// in alice's backup — and a restore hands it to her. Afterwards no snapshot of the account holds
// a byte of either (every snapshot dumped whole by restic as root), nor does anything alice gets
// back when she restores the whole of each backup. Up to ROUNDS backups: the race is run until
// it would have been won (the backup by path lost it in the first round).
//
// One panel storage backend (the first of TEST_BACKENDS): the race is between the backup's reads
// and the file system, not the panel's database.

const ROUNDS = 10;
const FILES = 200;
const root = makeChrootableRoot("backup-home-swap");
const outside = path.join(root, "outside", "rootdir");
const rootMarker = `root-secret-${randomBytes(6).toString("hex")}`;
const neighbourMarker = `bob-private-${randomBytes(6).toString("hex")}`;
const createdUsers: string[] = [];

// The customer's loop: perl, so a swap costs two system calls and no fork. On stop, her folders
// are put back.
const swapper = path.join(root, "swap.pl");

before(() => {
  fs.mkdirSync(outside, { recursive: true, mode: 0o755 });
  for (let i = 1; i <= FILES; i++) fs.writeFileSync(path.join(outside, `f${i}`), `${rootMarker} f${i}\n`, { mode: 0o600 });
  fs.writeFileSync(
    swapper,
    `use strict;
my ($box, $root_dir, $neighbour_dir, $stop) = @ARGV;
die "usage: swap.pl BOX ROOT_DIR NEIGHBOUR_DIR STOP\n" unless defined $stop;
my %links = ("$box/a" => $root_dir, "$box/b" => $neighbour_dir);
my $n = 0;
until (-e $stop) {
  for my $dir (sort keys %links) {
    if (-l $dir) { unlink($dir) and rename("$dir.real", $dir); }
    elsif (-d _) { $n++; symlink($links{$dir}, $dir) if rename($dir, "$dir.real"); }
  }
}
for my $dir (keys %links) { if (-l $dir) { unlink($dir); rename("$dir.real", $dir); } }
print "$n swaps\\n";
`,
    { mode: 0o644 },
  );
});

after(() => {
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

/** The perl loop run as `username` until `stop` exists; its last line. */
function startLoop(username: string, args: string[]): { child: ChildProcess; result: Promise<string> } {
  const child = spawn("runuser", ["-u", username, "--", "perl", swapper, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  return { child, result: new Promise((resolve) => child.on("close", () => resolve(output.trim()))) };
}

/** Every regular file below `dir`, links never followed (nor descended into): its path and content. */
function filesBelow(dir: string, prefix = ""): { file: string; text: string }[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = path.join(prefix, entry.name);
    if (entry.isDirectory()) return filesBelow(path.join(dir, entry.name), relative);
    return entry.isFile() ? [{ file: relative, text: fs.readFileSync(path.join(dir, entry.name), "latin1") }] : [];
  });
}

const seed = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });

for (const backend of machineBackends("pglite")) {
  describe(`backups of a home whose folders its customer swaps for links (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const suffix = randomBytes(3).toString("hex");
    const alice = { username: `ha${suffix}`, id: 0 };
    const bob = { username: `hb${suffix}`, id: 0 };
    const homeRoot = path.join(root, "home");
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const client = () => apiClient(env.server.baseUrl, env.seed.adminKey, alice.id);
    const restic = (args: string[]) =>
      execFileSync("restic", args, {
        env: { ...process.env, RESTIC_REPOSITORY: path.join(root, `repository-${backend}`), RESTIC_PASSWORD_FILE: path.join(root, `backup-password-${backend}`), RESTIC_CACHE_DIR: path.join(root, "cache") },
        maxBuffer: 1024 * 1024 * 1024,
      });

    before(async () => {
      createdUsers.push(alice.username, bob.username);
      env = await createEnvironment(backend, seed, backupPanelEnv(root, backend));
      for (const account of [alice, bob]) {
        const created = await admin().post("/api/admin/accounts", { username: account.username, domain: `${account.username}.example` });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        account.id = created.body.id;
      }
      // bob's files, by the names alice's have: his home is 0750, his group's; alice is not in it.
      asUser(bob.username, "sh", ["-c", `mkdir -p public_html/share && for i in $(seq 1 ${FILES}); do echo "${neighbourMarker} f$i" > public_html/share/f$i; done`], { cwd: path.join(homeRoot, bob.username) });
      asUser(alice.username, "sh", ["-c", `mkdir -p public_html/box/a public_html/box/b && for i in $(seq 1 ${FILES}); do echo "alice's own f$i" > public_html/box/a/f$i; echo "alice's own f$i" > public_html/box/b/f$i; done`], {
        cwd: path.join(homeRoot, alice.username),
      });
      assert.throws(() => asUser(alice.username, "cat", [path.join(outside, "f1")]), "alice cannot read root's file herself");
      assert.throws(() => asUser(alice.username, "cat", [path.join(homeRoot, bob.username, "public_html", "share", "f1")]), "nor bob's");
    });
    after(async () => {
      for (const account of [alice, bob]) await admin().delete(`/api/admin/accounts/${account.id}`).catch(() => undefined);
      await env?.teardown();
    });

    /** What a dump of `snapshot` holds of root's and bob's files: the markers found in it. */
    function stolenIn(snapshot: { id: string; paths: string[] }): string[] {
      const dumped = restic(["dump", "--no-lock", snapshot.id, snapshot.paths[0]]).toString("latin1");
      return [rootMarker, neighbourMarker].filter((marker) => dumped.includes(marker));
    }

    test("backups while the customer swaps her folders for links to root's and to her neighbour's: no snapshot holds their files, nor does what she restores", async () => {
      const checked = new Set<string>();
      const failures: string[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const stop = path.join(root, `stop-${round}`);
        const attacker = startLoop(alice.username, [path.join(homeRoot, alice.username, "public_html", "box"), outside, path.join(homeRoot, bob.username, "public_html", "share"), stop]);
        let swaps = "";
        try {
          await backUp(admin(), alice.id).catch((error: Error) => failures.push(`round ${round}: ${error.message}`));
        } finally {
          fs.writeFileSync(stop, "");
          swaps = await attacker.result;
        }
        // Every snapshot of the account, listed or not (a run that failed keeps what restic stored until retention).
        const snapshots = JSON.parse(restic(["snapshots", "--no-lock", "--json", "--tag", `account-id:${alice.id}`]).toString()) as { id: string; paths: string[]; tags: string[] }[];
        for (const snapshot of snapshots.filter((candidate) => candidate.tags.includes("part:home") && !checked.has(candidate.id))) {
          checked.add(snapshot.id);
          assert.deepEqual(stolenIn(snapshot), [], `round ${round} (${swaps}): the backup of alice's home holds files she cannot read`);
        }
      }
      assert.deepEqual(failures, [], "her own races never make her backup fail");

      // alice restores the whole of each backup beside her files, as her user writes it.
      const runs = (await client().get("/api/client/backups")).body.snapshots as { id: string }[];
      assert.ok(runs.length >= 1, "her backups are listed");
      // A run taken while both her folders were mid-swap may hold neither (tar meets a link where
      // it listed a folder): her own files come back from the runs that hold them.
      let ownBack = 0;
      for (const [index, run] of runs.entries()) {
        const restored = await client().post(`/api/client/backups/${run.id}/restore`, { path: "public_html/box", to: `public_html/back-${index}` });
        assert.equal(restored.status, 200, JSON.stringify(restored.body));
        const files = filesBelow(path.join(homeRoot, alice.username, "public_html", `back-${index}`));
        if (files.some(({ text }) => text.startsWith("alice's own"))) ownBack++;
        assert.deepEqual(
          files.filter(({ text }) => text.includes(rootMarker) || text.includes(neighbourMarker)).map(({ file }) => file),
          [],
          `the restore of ${run.id} gave alice root's or bob's files`,
        );
      }
      assert.ok(ownBack >= 1, "her own files came back");
    });
  });
}
