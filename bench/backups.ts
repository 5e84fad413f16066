import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ensureRepository, restic } from "@/lib/provisioning/restic";
import { verdict } from "./support";

// (i) Backups: restic's deduplication on a 200 MB home (150 MB of incompressible files, 50 MB of
// text), backed up twice as the nightly job does (`restic backup --one-file-system` into a
// local repository, through lib/provisioning/restic.ts). Targets: the second, unchanged backup
// adds < 1 % of what the first stored, and takes < 1/3 of its time. Then one file of 1 MB
// changes: the third adds about that much, not the home again. Runs in a child process of its
// own: the configuration below must be the one env() reads first.

const MB = 1024 * 1024;

const repositoryBytes = (repository: string) => Number(execFileSync("du", ["-sb", repository], { encoding: "utf8" }).split("\t")[0]);

async function main() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-bench-backups-"));
  const home = path.join(root, "home", "benchuser");
  const repository = path.join(root, "repository");
  Object.assign(process.env, { DATA_DIR: root, BACKUP_REPOSITORY: repository, BACKUP_PASSWORD_FILE: path.join(root, "password") });
  try {
    fs.mkdirSync(path.join(home, "public_html", "uploads"), { recursive: true });
    for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(home, "public_html", "uploads", `photo-${i}.jpg`), randomBytes(3 * MB));
    const words = Array.from({ length: 5000 }, () => randomBytes(4).toString("hex"));
    for (let i = 0; i < 50; i++) {
      const lines = Array.from({ length: 20_000 }, (_, n) => `<p>${words[(i * 7 + n) % words.length]} ${words[(n * 13) % words.length]} line ${n}</p>`);
      fs.writeFileSync(path.join(home, "public_html", `page-${i}.html`), lines.join("\n").slice(0, MB));
    }
    await ensureRepository();
    const backup = async () => {
      const started = performance.now();
      await restic(["backup", "--one-file-system", "--tag", "account:benchuser", home]);
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
    console.log(`\n(i) backups of a 200 MB home by restic (local repository)`);
    console.log(`first backup: ${firstSeconds.toFixed(2)} s, ${(stored / MB).toFixed(1)} MB stored`);
    console.log(`second, unchanged: ${secondSeconds.toFixed(2)} s, ${((afterSecond - afterFirst) / 1024).toFixed(1)} KB added`);
    console.log(`third, one 1 MB file changed: ${((afterThird - afterSecond) / MB).toFixed(2)} MB added`);
    verdict("second backup's addition / first's (unchanged home)", (afterSecond - afterFirst) / stored, 0.01, "<");
    verdict("second backup's time / first's", secondSeconds / firstSeconds, 1 / 3, "<");
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
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
