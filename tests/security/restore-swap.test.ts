import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
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

// Attack: a path restore while the customer races it (issue 29, item 1). The customer (alice,
// acting as her Linux user) loops, while her own restore runs, swapping every restored folder
// she can reach — in her home and in any staging copy the panel makes — for a link to a root
// directory outside the homes (`mv victim victim.realN; ln -s /outside/victim victim`). A root
// process that then chowns, chmods or removes by path through the swapped folder gives her a
// root file or deletes one. Afterwards the outside tree must be exactly as it was: owner, mode,
// content, every file still there. Another account (bob) loops reading alice's restored file
// by every path the restore could expose; he must never read it. Each restore is repeated up
// to ROUNDS times: the race is run until it would have been won.
//
// One panel storage backend (the first of TEST_BACKENDS): the race is between restic, the file
// system and root's steps, not the panel's database.

const ROUNDS = 12;
const root = makeChrootableRoot("restore-swap");
const outside = path.join(root, "outside");
const createdUsers: string[] = [];

// The customer's loop: perl, so a swap costs two system calls and no fork.
const swapper = path.join(root, "swap.pl");
const reader = path.join(root, "read.pl");

before(() => {
  fs.mkdirSync(path.join(outside, "victim"), { recursive: true, mode: 0o755 });
  fs.writeFileSync(path.join(outside, "victim", "secret.txt"), "root's secret\n", { mode: 0o600 });
  fs.writeFileSync(path.join(outside, "victim", "keep.txt"), "root's file\n", { mode: 0o644 });
  fs.writeFileSync(path.join(outside, "other.txt"), "root's other file\n", { mode: 0o644 });
  // Toggles each folder it finds between the real folder and a link to the root directory, so
  // that any root step by path sees a folder when it looks and follows the link when it acts.
  fs.writeFileSync(
    swapper,
    `use strict;
my ($home_root, $user, $outside, $stop) = @ARGV;
my $home = "$home_root/$user";
my ($n, %real) = (0);
until (-e $stop) {
  my @targets = (
    (map { [$_, $outside] } glob("$home_root/.restore-*$home/public_html")),
    (map { [$_, "$outside/victim"] } (glob("$home_root/.restore-*$home/public_html/victim"), "$home/public_html/victim")),
  );
  for my $target (@targets) {
    my ($dir, $link) = @$target;
    if (-l $dir) {
      next unless $real{$dir};
      unlink($dir) and rename($real{$dir}, $dir) and delete $real{$dir};
    } elsif (-d _) {
      $n++;
      $real{$dir} = "$dir.real$n";
      symlink($link, $dir) if rename($dir, $real{$dir});
    }
  }
}
print "$n swaps\\n";
`,
    { mode: 0o644 },
  );
  fs.writeFileSync(
    reader,
    `use strict;
my ($home_root, $user, $marker, $stop) = @ARGV;
my $read = 0;
until (-e $stop) {
  for my $file (glob("$home_root/.restore-*$home_root/$user/public_html/victim/private.txt"), "$home_root/$user/public_html/victim/private.txt") {
    next unless open(my $handle, "<", $file);
    my $text = <$handle>;
    close $handle;
    if (defined $text and index($text, $marker) >= 0) { $read++; print "read $file\\n"; }
  }
}
print "$read reads\\n";
`,
    { mode: 0o644 },
  );
});

after(() => {
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

/** Every entry under `dir` (links not followed): path, kind, owner, mode, and a hash of a file's content. */
function tree(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).sort().map((relative) => {
    const full = path.join(dir, relative);
    const stat = fs.lstatSync(full);
    const content = stat.isFile() ? createHash("sha256").update(fs.readFileSync(full)).digest("hex").slice(0, 16) : stat.isSymbolicLink() ? "link" : "dir";
    return `${relative} ${stat.uid}:${stat.gid} ${(stat.mode & 0o7777).toString(8)} ${content}`;
  });
}

/** A perl loop run as `username` until `stop` exists; its last line. */
function startLoop(username: string, script: string, args: string[]): { child: ChildProcess; result: Promise<string> } {
  const child = spawn("runuser", ["-u", username, "--", "perl", script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  return { child, result: new Promise((resolve) => child.on("close", () => resolve(output.trim()))) };
}

const seed = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });

for (const backend of machineBackends("pglite")) {
  describe(`a path restore raced by its own customer (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    const suffix = randomBytes(3).toString("hex");
    const alice = { username: `sa${suffix}`, id: 0 };
    const bob = { username: `sb${suffix}`, id: 0 };
    const homeRoot = path.join(root, "home");
    const victim = () => path.join(homeRoot, alice.username, "public_html", "victim");
    const marker = `alice-private-${randomBytes(6).toString("hex")}`;
    let run = "";
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const client = () => apiClient(env.server.baseUrl, env.seed.adminKey, alice.id);

    before(async () => {
      createdUsers.push(alice.username, bob.username);
      env = await createEnvironment(backend, seed, backupPanelEnv(root, backend));
      for (const account of [alice, bob]) {
        const created = await admin().post("/api/admin/accounts", { username: account.username, domain: `${account.username}.example` });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        account.id = created.body.id;
      }
      // alice's folder: the file names of the root directory's, her private file, and enough
      // data (10 MB in 200 files) that each restore takes a while.
      const script = [
        "set -e",
        "mkdir -p public_html/victim/sub public_html/victim/bulk",
        "echo \"alice's copy\" > public_html/victim/secret.txt",
        "echo \"alice's keep\" > public_html/victim/keep.txt",
        `echo ${marker} > public_html/victim/private.txt`,
        "chmod 644 public_html/victim/private.txt",
        "echo deep > public_html/victim/sub/deep.txt",
        "for i in $(seq 1 200); do head -c 51200 /dev/urandom > public_html/victim/bulk/f$i; done",
      ].join("\n");
      asUser(alice.username, "sh", ["-c", script], { cwd: path.join(homeRoot, alice.username) });
      run = await backUp(admin(), alice.id);
    });
    after(async () => {
      for (const account of [alice, bob]) await admin().delete(`/api/admin/accounts/${account.id}`).catch(() => undefined);
      await env?.teardown();
    });

    test("swapping restored folders for links to a root directory outside the home, in a loop: the root files stay root's, unchanged, none removed", async () => {
      const before = tree(outside);
      for (let round = 1; round <= ROUNDS; round++) {
        const stop = path.join(root, `stop-swap-${round}`);
        const attacker = startLoop(alice.username, swapper, [homeRoot, alice.username, outside, stop]);
        let restored: { status: number; body: unknown };
        let swaps = "";
        try {
          // A file of the folder beside it in odd rounds (its folder in the home is not on the
          // way, so the restore goes ahead whatever the loop does there), the whole folder into
          // its place in even ones.
          const request = round % 2 ? { path: "public_html/victim/secret.txt", to: `public_html/secret-${round}.txt` } : { path: "public_html/victim" };
          restored = await client().post(`/api/client/backups/${run}/restore`, request);
        } finally {
          fs.writeFileSync(stop, "");
          swaps = await attacker.result;
        }
        assert.deepEqual(tree(outside), before, `round ${round} (${swaps}): the directory outside the home changed`);
        // Whether the restore got through the customer's swaps or gave up is hers to see (422);
        // it never fails as the panel's own fault.
        assert.ok([200, 422].includes(restored.status), `round ${round}: ${restored.status} ${JSON.stringify(restored.body)}`);
        // The customer's leftovers (her renamed folders, her links) go, as she would remove them.
        asUser(alice.username, "sh", ["-c", 'rm -rf public_html/victim public_html/victim.real* public_html/secret-*'], { cwd: path.join(homeRoot, alice.username) });
      }
      const last = await client().post(`/api/client/backups/${run}/restore`, { path: "public_html/victim" });
      assert.equal(last.status, 200, JSON.stringify(last.body));
      assert.equal(fs.readFileSync(path.join(victim(), "secret.txt"), "utf8"), "alice's copy\n", "without a race the folder comes back");
      assert.equal(fs.readdirSync(path.join(victim(), "bulk")).length, 200);
    });

    test("another account reading the restored files by every path a restore could expose, in a loop: never readable", async () => {
      for (let round = 1; round <= ROUNDS; round++) {
        const stop = path.join(root, `stop-read-${round}`);
        const spy = startLoop(bob.username, reader, [homeRoot, alice.username, marker, stop]);
        let output = "";
        try {
          const restored = await client().post(`/api/client/backups/${run}/restore`, { path: "public_html/victim" });
          assert.equal(restored.status, 200, JSON.stringify(restored.body));
        } finally {
          fs.writeFileSync(stop, "");
          output = await spy.result;
        }
        assert.match(output, /^0 reads$/m, `round ${round}: bob read alice's file:\n${output}`);
      }
    });
  });
}
