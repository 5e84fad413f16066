import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { forgetMoveRepository, type MoveSnapshots, restoreMoveSnapshot, takeMoveSnapshot } from "@/lib/provisioning/move-runs";
import { asUser } from "../support/backups";
import { makeChrootableRoot } from "../support/ssh-server";
import { removeLinuxUsers } from "../support/web-servers";

// Issue 37, item 0: a move's final pass costs what changed since the copy pass, not what the
// home holds. Two nodes on this machine (each its DATA_DIR and HOME_ROOT; the account's Linux
// user is the same on both, as a move makes it), the real passes of lib/provisioning/move-runs.ts
// — tar run as the account's user on each side, restic into a move repository on local disk.
// Proven here: the final pass's archive holds only what changed; after it the target's site
// folders are the source's, byte for byte, owner and mode (a file deleted between the passes
// is gone, a changed one new, folders renamed and swapped whole); a final pass run again gives
// the same; a copy whose archive a race made name a folder where it holds a link is written over
// whatever the target had; a final of changes tar cannot apply is followed by a whole one; and
// the customer's links and swaps in her home make root read or write nothing
// outside it, on either side.

const MB = 1024 * 1024;
const root = makeChrootableRoot("move-final-pass");
const suffix = randomBytes(3).toString("hex");
const alice = `mf${suffix}`;
const bob = `mg${suffix}`;
const createdUsers: string[] = [];
const source = { data: path.join(root, "source-data"), homes: path.join(root, "source-homes") };
const target = { data: path.join(root, "target-data"), homes: path.join(root, "target-homes") };
type Node = typeof source;
const store = path.join(root, "store");
const outside = path.join(root, "outside");
const rootMarker = `root-secret-${randomBytes(6).toString("hex")}`;
const neighbourMarker = `bob-private-${randomBytes(6).toString("hex")}`;
const FOLDERS = ["public_html", "shop"];

/** `work` as `node` would do it: its own DATA_DIR and HOME_ROOT (the configuration read afresh). */
async function on<T>(node: Node, work: () => Promise<T>): Promise<T> {
  Object.assign(process.env, { DATA_DIR: node.data, HOME_ROOT: node.homes, SYSTEM_USERS: "1" });
  delete (globalThis as { __panelEnv?: unknown }).__panelEnv;
  return work();
}

/** A home as the panel makes it: root's, the account's group, 0750; the account's own public_html inside. */
function makeHome(homes: string, username: string): string {
  const home = path.join(homes, username);
  fs.mkdirSync(home, { recursive: true });
  execFileSync("chown", [`root:${username}`, home]);
  fs.chmodSync(home, 0o750);
  fs.mkdirSync(path.join(home, "public_html"));
  execFileSync("chown", [`${username}:${username}`, path.join(home, "public_html")]);
  fs.chmodSync(path.join(home, "public_html"), 0o750);
  return home;
}

/** Every entry below `dir`, links never followed: kind, mode, owner, size, time and content (a link: its target). */
function tree(dir: string, prefix = ""): Map<string, string> {
  const entries = new Map<string, string>();
  for (const name of fs.readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    const relative = path.join(prefix, name);
    const stat = fs.lstatSync(full);
    const head = `${(stat.mode & 0o7777).toString(8)} ${stat.uid}:${stat.gid}`;
    if (stat.isSymbolicLink()) entries.set(relative, `link ${head} -> ${fs.readlinkSync(full)}`);
    else if (stat.isDirectory()) {
      entries.set(relative, `folder ${head}`);
      for (const [below, what] of tree(full, relative)) entries.set(below, what);
    } else {
      const digest = createHash("sha256").update(fs.readFileSync(full)).digest("hex").slice(0, 16);
      entries.set(relative, `file ${head} ${stat.size} ${Math.floor(stat.mtimeMs / 1000)} ${digest}`);
    }
  }
  return entries;
}

const siteTree = (home: string) => new Map([...tree(path.join(home, "public_html"))].map(([name, what]) => [`public_html/${name}`, what]));

/** `script` run by `username` in `dir`, as the customer's shell would. */
const customer = (username: string, dir: string, script: string) => asUser(username, "sh", ["-c", script], { cwd: dir });

before(() => {
  for (const dir of [source.data, target.data]) fs.mkdirSync(dir, { mode: 0o700 });
  for (const dir of [source.homes, target.homes, store]) fs.mkdirSync(dir, { mode: 0o755 });
  for (const username of [alice, bob]) {
    createdUsers.push(username);
    execFileSync("useradd", ["--no-create-home", "--home-dir", path.join(source.homes, username), "--shell", "/usr/sbin/nologin", "--user-group", username]);
  }
  // root's files outside every home (0600 in a folder only root may write) and bob's, where alice cannot reach.
  fs.mkdirSync(outside, { mode: 0o755 });
  for (let i = 1; i <= 20; i++) fs.writeFileSync(path.join(outside, `f${i}`), `${rootMarker} f${i}\n`, { mode: 0o600 });
  const bobHome = makeHome(source.homes, bob);
  customer(bob, path.join(bobHome, "public_html"), `mkdir share && for i in $(seq 1 20); do echo "${neighbourMarker} f$i" > share/f$i; done`);
});

after(() => {
  removeLinuxUsers(createdUsers);
  fs.rmSync(root, { recursive: true, force: true });
});

describe("a move's final pass", () => {
  const repository = path.join(store, `move-${suffix}`);
  const move = { repository, password: randomBytes(32).toString("base64url") };
  const passwordFile = path.join(root, "move-password");
  const resticCli = (args: string[]) =>
    execFileSync("restic", args, { env: { ...process.env, RESTIC_REPOSITORY: repository, RESTIC_PASSWORD_FILE: passwordFile, RESTIC_CACHE_DIR: path.join(root, "cache") }, maxBuffer: 1024 * MB });
  let sourceHome = "";
  let targetHome = "";
  let copy: MoveSnapshots | null = null;

  /** One pass: the source's snapshot, the target's restore of it (as the driver runs them). */
  async function pass(name: "copy" | "final"): Promise<MoveSnapshots> {
    const copyId = name === "final" ? copy!.home : null;
    const common = { move, pass: name, username: alice, folders: FOLDERS, copy: copyId, databases: [], database_users: [] };
    const snapshots = await on(source, () => takeMoveSnapshot(common));
    await on(target, () => restoreMoveSnapshot({ ...common, snapshots, grants: [] }));
    if (name === "copy") copy = snapshots;
    return snapshots;
  }

  /** The bytes of the home archive a snapshot holds. */
  const archiveBytes = (id: string) => resticCli(["dump", "--no-lock", id, "/home.tar"]).length;

  before(() => {
    fs.writeFileSync(passwordFile, `${move.password}\n`, { mode: 0o600 });
    sourceHome = makeHome(source.homes, alice);
    targetHome = makeHome(target.homes, alice);
    // What the target's public_html held before the move (the preparing step's own page): the copy replaces it.
    customer(alice, path.join(targetHome, "public_html"), "echo placeholder > index.html");
    // 24 MB of alice's site: uploads, code in folders of their own modes, a private file, links of her own.
    customer(
      alice,
      path.join(sourceHome, "public_html"),
      [
        "mkdir -p uploads wp-content/plugins/a wp-content/plugins/b private cache",
        "for i in $(seq 1 20); do head -c 1048576 /dev/urandom > uploads/photo-$i.jpg; done",
        "for i in $(seq 1 200); do echo \"<?php echo $i;\" > wp-content/plugins/a/file-$i.php; echo \"b $i\" > wp-content/plugins/b/file-$i.php; done",
        "head -c 4194304 /dev/urandom > cache/blob.bin",
        "echo one > index.php && echo secret > private/keys.txt && chmod 600 private/keys.txt && chmod 700 private",
        "echo stale > stale.html && ln -s uploads/photo-1.jpg latest.jpg",
        "chmod 755 wp-content && chmod 640 index.php",
      ].join(" && "),
    );
  });

  test("the copy pass makes the target's site folders the source's (owner, mode, time, content); what the target had there before goes", async () => {
    const snapshots = await pass("copy");
    assert.ok(snapshots.home, "the copy pass stored the home");
    assert.ok(archiveBytes(snapshots.home) > 24 * MB, "the copy pass archives the site folders whole");
    assert.deepEqual(siteTree(targetHome), siteTree(sourceHome));
    const kept = fs.readdirSync(path.join(source.data, "moves")).filter((name) => name.endsWith(".listing"));
    assert.equal(kept.length, 1, "the source keeps the copy's level 0");
    const stat = fs.statSync(path.join(source.data, "moves", kept[0]));
    assert.equal(stat.uid, 0, "root's own");
    assert.equal(stat.mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.join(source.data, "moves")).mode & 0o777, 0o700, "in a folder no customer enters");
  });

  test("the final pass stores only what changed; after it a deleted file or folder is gone, a changed file new, modes and times as the source's", async () => {
    // Changes of the same second as the copy must count: tar compares with the time the copy began.
    customer(
      alice,
      path.join(sourceHome, "public_html"),
      [
        "head -c 1048576 /dev/urandom > uploads/photo-3.jpg",
        "rm stale.html",
        "rm -r wp-content/plugins/b",
        "mkdir -p wp-content/plugins/c && echo c > wp-content/plugins/c/index.php",
        "echo new > uploads/new.txt",
        "echo two > index.php",
        "chmod 604 index.php",
        "touch -d 2001-01-01 index.php",
      ].join(" && "),
    );
    const snapshots = await pass("final");
    assert.ok(snapshots.home);
    const bytes = archiveBytes(snapshots.home);
    assert.ok(bytes < 2 * MB, `the final pass archives what changed (1 MB and the folders' names), not the 24 MB: ${bytes} bytes`);
    const after = siteTree(targetHome);
    assert.deepEqual(after, siteTree(sourceHome));
    assert.equal(after.has("public_html/stale.html"), false, "a file deleted on the source between the passes is gone on the target");
    assert.equal(after.has("public_html/wp-content/plugins/b"), false, "and a folder");
    assert.equal(fs.readFileSync(path.join(targetHome, "public_html", "index.php"), "utf8"), "two\n", "a file changed and given back an old time");
    assert.equal(fs.statSync(path.join(targetHome, "public_html", "index.php")).mode & 0o777, 0o604);
    const uid = Number(execFileSync("id", ["-u", alice], { encoding: "utf8" }));
    for (const [name] of after) assert.equal(fs.lstatSync(path.join(targetHome, name)).uid, uid, `${name} is the account's`);
  });

  test("folders renamed and swapped since the copy: the final pass names the renames, and the target has each folder with its files", async () => {
    customer(alice, path.join(sourceHome, "public_html"), "mv cache cache-renamed && mv wp-content/plugins/a wp-content/plugins/tmp && mv wp-content/plugins/c wp-content/plugins/a && mv wp-content/plugins/tmp wp-content/plugins/c");
    const snapshots = await pass("final");
    assert.ok(archiveBytes(snapshots.home!) < 2 * MB, "of changes only (the 1 MB photo of the pass before among them: each final is against the copy)");
    assert.deepEqual(siteTree(targetHome), siteTree(sourceHome));
    assert.equal(fs.statSync(path.join(targetHome, "public_html", "cache-renamed", "blob.bin")).size, 4 * MB);
    assert.equal(fs.readFileSync(path.join(targetHome, "public_html", "wp-content/plugins/a/index.php"), "utf8"), "c\n", "two folders that swapped names");
  });

  test("a final pass run again after another (the switch tried again, the source changed meanwhile) gives the source's folders, applied onto the copy", async () => {
    // The folders back under the names the copy knew them by: this archive is of changes only, and
    // names as present on the target the files of cache/, which the last pass removed there with its name.
    customer(alice, path.join(sourceHome, "public_html"), "mv cache-renamed cache && mv wp-content/plugins/a wp-content/plugins/tmp && mv wp-content/plugins/c wp-content/plugins/a && mv wp-content/plugins/tmp wp-content/plugins/c && echo three > index.php && rm uploads/photo-5.jpg");
    const again = await pass("final");
    assert.ok(archiveBytes(again.home!) < 2 * MB, "of changes only");
    assert.deepEqual(siteTree(targetHome), siteTree(sourceHome));
    assert.equal(fs.statSync(path.join(targetHome, "public_html", "cache", "blob.bin")).size, 4 * MB);
    // The same archive applied a second time (the target's restore run again), then a new one.
    await on(target, () =>
      restoreMoveSnapshot({ move, pass: "final", username: alice, snapshots: again, copy: copy!.home, folders: FOLDERS, databases: [], database_users: [], grants: [] }),
    );
    assert.deepEqual(siteTree(targetHome), siteTree(sourceHome));
    customer(alice, path.join(sourceHome, "public_html"), "mkdir -p later && echo later > later/page.html");
    await pass("final");
    assert.deepEqual(siteTree(targetHome), siteTree(sourceHome));
  });

  test("the customer's links, and folders swapped for links while each pass reads and writes, make root read or write nothing outside her home", async () => {
    const site = path.join(sourceHome, "public_html");
    customer(alice, site, `mkdir -p box/a box/b && for i in $(seq 1 20); do echo "alice's own f$i" > box/a/f$i; echo "alice's own f$i" > box/b/f$i; done`);
    customer(alice, site, `ln -s ${outside} to-root && ln -s ${path.join(source.homes, bob, "public_html", "share")} to-bob && ln -s ${outside}/f1 root-file`);
    const stop = path.join(root, "stop");
    const swapper = swapLoop(path.join(site, "box"), stop);
    const outsideBefore = tree(outside);
    const failures: string[] = [];
    try {
      for (let round = 0; round < 5; round++) {
        customer(alice, site, `echo round ${round} > box/changing.txt`);
        // A pass the race made fail (tar meeting a link where it listed a folder) is tried again by the driver: here, the next round.
        await pass(round === 0 ? "copy" : "final").catch((error: Error) => failures.push(`round ${round}: ${error.message}`));
      }
    } finally {
      fs.writeFileSync(stop, "");
      await swapper.done;
    }
    // The race over (her folders back in place), the switch's next attempt gives the target her site
    // as it is: what the racing copy could not read is not taken as being there. An attempt whose
    // changes cannot be applied onto the racing copy (it can hold a link where her folder is now:
    // the test below) fails, and the driver's next attempt — taken whole — must not.
    await pass("final").catch(() => pass("final"));
    assert.deepEqual(siteTree(targetHome), siteTree(sourceHome));
    const snapshots = JSON.parse(resticCli(["snapshots", "--no-lock", "--json", "--tag", "part:home"]).toString()) as { id: string }[];
    assert.ok(snapshots.length >= 6);
    for (const snapshot of snapshots) {
      const dumped = resticCli(["dump", "--no-lock", snapshot.id, "/home.tar"]).toString("latin1");
      assert.equal(dumped.includes(rootMarker) || dumped.includes(neighbourMarker), false, `the move's snapshot ${snapshot.id.slice(0, 8)} holds what alice cannot read`);
    }
    const written = [...tree(path.join(targetHome, "public_html"))].filter(([name]) => {
      const full = path.join(targetHome, "public_html", name);
      return fs.lstatSync(full).isFile() && /root-secret|bob-private/.test(fs.readFileSync(full, "latin1"));
    });
    assert.deepEqual(written, [], "nothing of root's or bob's reached the target");
    assert.equal(fs.readlinkSync(path.join(targetHome, "public_html", "to-root")), outside, "her links are moved as links");
    assert.deepEqual(tree(outside), outsideBefore, "root's folder is as it was");
  });

  test("a link replaced by the folder it named between the passes: the final of changes cannot be applied onto the copy, so the next attempt is whole and gives the source's folders", async () => {
    const site = path.join(sourceHome, "public_html");
    customer(alice, site, "mkdir -p swap/release && echo v1 > swap/release/index.php && ln -s release swap/current");
    await pass("copy");
    // A deployment's last step: the link goes, the folder takes its name (tar's rename of it cannot replace the copy's link).
    customer(alice, site, "rm swap/current && mv swap/release swap/current && echo v2 > swap/current/index.php");
    await assert.rejects(pass("final"), /could not be written on this node/);
    const again = await pass("final");
    assert.ok(archiveBytes(again.home!) > 20 * MB, "the attempt after a failed one archives the site folders whole (23 MB)");
    assert.deepEqual(siteTree(targetHome), siteTree(sourceHome));
    assert.equal(fs.readFileSync(path.join(targetHome, "public_html", "swap", "current", "index.php"), "utf8"), "v2\n");
  });

  test("a copy whose archive holds a link where its folder's list names a folder (swapped as tar read it) is written over what the target has: the folders it holds emptied first", async () => {
    // What the source's tar writes when box/a is swapped for a link between its listing of box and
    // its reading of box/a: box's list names a folder `a`, the archive holds a link there.
    const crafted = path.join(root, "crafted-swap");
    fs.mkdirSync(path.join(crafted, "listed", "public_html", "box", "a"), { recursive: true });
    fs.writeFileSync(path.join(crafted, "listed", "public_html", "box", "a", "f1"), "listed\n");
    fs.writeFileSync(path.join(crafted, "listed", "public_html", "index.html"), "copied\n");
    fs.mkdirSync(path.join(crafted, "read", "public_html", "box"), { recursive: true });
    fs.symlinkSync(outside, path.join(crafted, "read", "public_html", "box", "a"));
    const archive = path.join(crafted, "home.tar");
    execFileSync("tar", ["--format=gnu", `--listed-incremental=${path.join(crafted, "listing")}`, "-cf", archive, "-C", path.join(crafted, "listed"), "./public_html"]);
    execFileSync("tar", ["--delete", "-f", archive, "./public_html/box/a"]);
    execFileSync("tar", ["--format=gnu", "-rf", archive, "-C", path.join(crafted, "read"), "./public_html/box/a"]);
    execFileSync("sh", ["-c", 'restic backup --stdin --stdin-filename=home.tar --tag=pass:copy --tag=part:home --tag=folder:public_html < "$1"', "sh", archive], {
      env: { ...process.env, RESTIC_REPOSITORY: repository, RESTIC_PASSWORD_FILE: passwordFile, RESTIC_CACHE_DIR: path.join(root, "cache") },
    });
    const [stored] = (JSON.parse(resticCli(["snapshots", "--no-lock", "--json", "--tag", "folder:public_html"]).toString()) as { id: string; time: string }[]).sort((x, y) => y.time.localeCompare(x.time));
    // The target as a later pass left it: box/a a folder with her files; and a site folder the archive does not hold.
    customer(alice, path.join(targetHome, "public_html"), "mkdir -p box/a && echo left > box/a/left.txt");
    fs.mkdirSync(path.join(targetHome, "shop"));
    execFileSync("chown", [`${alice}:${alice}`, path.join(targetHome, "shop")]);
    customer(alice, path.join(targetHome, "shop"), "echo kept > index.html");
    const outsideBefore = tree(outside);
    await on(target, () =>
      restoreMoveSnapshot({ move, pass: "copy", username: alice, snapshots: { home: stored.id, dumps: [], password_hashes: {} }, copy: null, folders: FOLDERS, databases: [], database_users: [], grants: [] }),
    );
    assert.deepEqual([...siteTree(targetHome).keys()], ["public_html/box", "public_html/box/a", "public_html/index.html"], "the folder the archive holds is as the archive has it");
    assert.equal(fs.readlinkSync(path.join(targetHome, "public_html", "box", "a")), outside, "the link in the folder's place");
    assert.equal(fs.readFileSync(path.join(targetHome, "shop", "index.html"), "utf8"), "kept\n", "a site folder the archive does not hold is left as it is");
    assert.deepEqual(tree(outside), outsideBefore, "nothing written or removed through the link");
    fs.rmSync(path.join(targetHome, "shop"), { recursive: true });
  });

  test("an archive that writes through a link it made writes nothing outside the home: the account's tar writes it", async () => {
    // What a customer's tar can be made to write: a link to root's folder, then a file below that link.
    const crafted = path.join(root, "crafted");
    fs.mkdirSync(path.join(crafted, "one", "public_html"), { recursive: true });
    fs.symlinkSync(outside, path.join(crafted, "one", "public_html", "escape"));
    fs.mkdirSync(path.join(crafted, "two", "public_html", "escape"), { recursive: true });
    fs.writeFileSync(path.join(crafted, "two", "public_html", "escape", "pwned"), "pwned\n");
    const archive = path.join(crafted, "home.tar");
    execFileSync("tar", ["-cf", archive, "-C", path.join(crafted, "one"), "./public_html/escape"]);
    execFileSync("tar", ["-rf", archive, "-C", path.join(crafted, "two"), "./public_html/escape/pwned"]);
    execFileSync("sh", ["-c", 'restic backup --stdin --stdin-filename=home.tar --tag=pass:final --tag=part:home < "$1"', "sh", archive], {
      env: { ...process.env, RESTIC_REPOSITORY: repository, RESTIC_PASSWORD_FILE: passwordFile, RESTIC_CACHE_DIR: path.join(root, "cache") },
    });
    const [stored] = (JSON.parse(resticCli(["snapshots", "--no-lock", "--json", "--tag", "pass:final", "--latest", "1"]).toString()) as { id: string; time: string }[]).sort((x, y) => y.time.localeCompare(x.time));
    const outsideBefore = tree(outside);
    await on(target, () =>
      restoreMoveSnapshot({ move, pass: "final", username: alice, snapshots: { home: stored.id, dumps: [], password_hashes: {} }, copy: copy!.home, folders: FOLDERS, databases: [], database_users: [], grants: [] }),
    ).catch(() => null);
    assert.deepEqual(tree(outside), outsideBefore, "nothing written in root's folder");
    assert.equal(fs.existsSync(path.join(outside, "pwned")), false);
  });

  test("move.forget removes the source's level 0 and the target's note with the repository", async () => {
    await on(target, () => forgetMoveRepository({ move: { ...move, repository: path.join(store, "not-this-one") } }));
    assert.ok(fs.readdirSync(path.join(target.data, "moves")).some((name) => name.endsWith(".final")), "another move's forget leaves it");
    await on(target, () => forgetMoveRepository({ move }));
    await on(source, () => forgetMoveRepository({ move }));
    for (const node of [source, target]) assert.deepEqual(fs.readdirSync(path.join(node.data, "moves")).filter((name) => /\.(listing|final)$/.test(name)), []);
    assert.equal(fs.existsSync(repository), false);
  });
});

/** alice's loop (perl, as her user): box/a swapped for a link to root's folder, box/b for one to bob's, and back, until `stop` exists. */
function swapLoop(box: string, stop: string): { child: ChildProcess; done: Promise<void> } {
  const script = `use strict;
my ($box, $root_dir, $neighbour_dir, $stop) = @ARGV;
my %links = ("$box/a" => $root_dir, "$box/b" => $neighbour_dir);
until (-e $stop) {
  for my $dir (sort keys %links) {
    if (-l $dir) { unlink($dir) and rename("$dir.real", $dir); }
    elsif (-d _) { symlink($links{$dir}, $dir) if rename($dir, "$dir.real"); }
  }
}
for my $dir (keys %links) { if (-l $dir) { unlink($dir); rename("$dir.real", $dir); } }
`;
  const child = spawn("runuser", ["-u", alice, "--", "perl", "-e", script, box, outside, path.join(source.homes, bob, "public_html", "share"), stop], { stdio: "ignore" });
  return { child, done: new Promise((resolve) => child.on("close", () => resolve())) };
}
