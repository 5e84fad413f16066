import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import fsPromises from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { HOME_ARCHIVE, startHomeArchive } from "@/lib/provisioning/home-backup";
import { homeSnapshotEntry, homeSnapshotPath, restoreIntoDirectory } from "@/lib/provisioning/home-restore";
import { ensureRepository, restic, type ResticSnapshot, snapshotsTagged } from "@/lib/provisioning/restic";
import { verdict } from "./support";

// (i) Backups: restic's deduplication on a 200 MB home (150 MB of incompressible files, 50 MB of
// text), backed up twice as the nightly job does — the home read by its own Linux user (tar as
// the account, lib/provisioning/home-backup.ts) into `restic backup --stdin` as home.tar, in a
// local repository. Targets: the second, unchanged backup adds < 1 % of what the first stored,
// and takes < 1/3 of its time. Then one file of 1 MB changes: the third adds about that much,
// not the home again. Then the restore of one 1 MB file, written by the account's user: from
// home.tar (the stream listed, then read again for the file) and, for comparison, from a backup
// of the old kind (restic's own tree of the home, read by path as root). Runs in a child process
// of its own: the configuration below must be the one env() reads first. As root it makes a
// Linux user for the home (removed after); otherwise tar reads as the bench's own user and the
// restores are not measured.

const MB = 1024 * 1024;

const repositoryBytes = (repository: string) => Number(execFileSync("du", ["-sb", repository], { encoding: "utf8" }).split("\t")[0]);

async function main() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-bench-backups-"));
  fs.chmodSync(root, 0o755);
  const home = path.join(root, "home", "benchuser");
  const repository = path.join(root, "repository");
  Object.assign(process.env, { DATA_DIR: root, BACKUP_REPOSITORY: repository, BACKUP_PASSWORD_FILE: path.join(root, "password") });
  const owner = process.getuid?.() === 0 ? `pb${randomBytes(4).toString("hex")}` : null;
  try {
    fs.mkdirSync(path.join(home, "public_html", "uploads"), { recursive: true });
    for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(home, "public_html", "uploads", `photo-${i}.jpg`), randomBytes(3 * MB));
    const words = Array.from({ length: 5000 }, () => randomBytes(4).toString("hex"));
    for (let i = 0; i < 50; i++) {
      const lines = Array.from({ length: 20_000 }, (_, n) => `<p>${words[(i * 7 + n) % words.length]} ${words[(n * 13) % words.length]} line ${n}</p>`);
      fs.writeFileSync(path.join(home, "public_html", `page-${i}.html`), lines.join("\n").slice(0, MB));
    }
    if (owner) {
      execFileSync("useradd", ["--no-create-home", "--home-dir", home, "--shell", "/usr/sbin/nologin", "--user-group", owner]);
      execFileSync("chown", ["-R", `${owner}:${owner}`, home]);
    }
    await ensureRepository();
    const backup = async () => {
      const started = performance.now();
      const archive = (await startHomeArchive(home, owner))!;
      const stored = restic(["backup", "--stdin", "--stdin-filename", HOME_ARCHIVE, "--tag", "account:benchuser"], archive.stdout);
      await Promise.all([archive.done, stored]);
      return (performance.now() - started) / 1000;
    };
    const empty = repositoryBytes(repository);
    const firstSeconds = await backup();
    const afterFirst = repositoryBytes(repository);
    const secondSeconds = await backup();
    const afterSecond = repositoryBytes(repository);
    fs.writeFileSync(path.join(home, "public_html", "uploads", "photo-0.jpg"), randomBytes(MB));
    await backup();
    const afterThird = repositoryBytes(repository);
    const stored = afterFirst - empty;
    console.log(`\n(i) backups of a 200 MB home read by its user (tar into restic as home.tar, local repository)`);
    console.log(`first backup: ${firstSeconds.toFixed(2)} s, ${(stored / MB).toFixed(1)} MB stored`);
    console.log(`second, unchanged: ${secondSeconds.toFixed(2)} s, ${((afterSecond - afterFirst) / 1024).toFixed(1)} KB added`);
    console.log(`third, one 1 MB file changed: ${((afterThird - afterSecond) / MB).toFixed(2)} MB added`);
    if (owner) await measureRestores(home, owner);
    verdict("second backup's addition / first's (unchanged home)", (afterSecond - afterFirst) / stored, 0.01, "<");
    verdict("second backup's time / first's", secondSeconds / firstSeconds, 1 / 3, "<");
  } finally {
    if (owner) spawnSync("userdel", [owner]);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** One 1 MB file restored beside its place by the account's user, from the newest home.tar and from a backup of restic's own tree of the home. */
async function measureRestores(home: string, owner: string) {
  await restic(["backup", "--one-file-system", "--tag", "account:benchuser", home]);
  const snapshots = await snapshotsTagged("account:benchuser");
  const newest = (kind: (snapshot: ResticSnapshot) => boolean) => snapshots.filter(kind).at(-1)!;
  const uploads = await fsPromises.open(path.join(home, "public_html", "uploads"), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    for (const [label, snapshot] of [
      ["from home.tar", newest((snapshot) => snapshot.paths[0] === `/${HOME_ARCHIVE}`)],
      ["from restic's tree (backups made before home.tar)", newest((snapshot) => snapshot.paths[0] === home)],
    ] as const) {
      const started = performance.now();
      const source = homeSnapshotPath(snapshot, home, ["public_html", "uploads", "photo-0.jpg"]);
      const entry = (await homeSnapshotEntry(owner, source))!;
      const name = `restored-${randomBytes(3).toString("hex")}.jpg`;
      const outcome = await restoreIntoDirectory({ username: owner, source, entry, parent: uploads, name });
      if (outcome !== "restored" || fs.statSync(path.join(home, "public_html", "uploads", name)).size !== MB) throw new Error(`the restore ${label} did not restore: ${outcome}`);
      console.log(`restore of one 1 MB file ${label}: ${((performance.now() - started) / 1000).toFixed(2)} s`);
    }
  } finally {
    await uploads.close();
  }
}

/** Runs (i) in a child process (its own configuration). */
export function runBackupsBench(): void {
  const result = spawnSync(path.join("node_modules", ".bin", "tsx"), ["bench/backups.ts"], {
    stdio: "inherit",
    env: { ...process.env, PANEL_BENCH_BACKUPS: "1" },
  });
  if (result.status !== 0) throw new Error(`the backups bench failed (exit ${result.status})`);
}

if (process.env.PANEL_BENCH_BACKUPS === "1") await main();
