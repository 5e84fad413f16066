import { execFileSync, spawnSync } from "node:child_process";
import { createHash, randomBytes, randomFillSync } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { verdict } from "./support";

// (m) Moves: the passes of a move of one account between two "nodes" on this machine (each its
// own DATA_DIR and HOME_ROOT; the account's Linux user on both, as a move makes it), run by the
// real pass functions of lib/provisioning/move-runs.ts — the source's takeMoveSnapshot (the site
// folders read by the account's user with tar, into restic), the target's restoreMoveSnapshot
// (restic's dump written by the account's user with tar) — in a move repository on local disk.
// For homes of 100 MB, 1 GB and 5 GB (BENCH_MOVE_SIZES, in MB: e.g. `100,1024` to leave out the
// 5 GB one; it needs ~3 × its size of free disk): the copy pass, then 1 MB changed (one upload
// rewritten, the source otherwise frozen), the final pass — each side timed. A home: 10 % in
// 16 KB files (code) in folders of 100, 90 % in 1 MB files (uploads), random bytes. Target: the
// final pass (both sides) < 2 s for the 1 GB home. No databases (each is dumped whole in every
// pass: its own cost). Runs in a child process of its own (the configuration is switched between
// the two nodes); needs root (a Linux user for the account).

const MB = 1024 * 1024;
const SIZES_MB = (process.env.BENCH_MOVE_SIZES ?? "100,1024,5120").split(",").map(Number);

interface Node {
  data: string;
  homes: string;
}

/** `work` as `node` does it: its DATA_DIR and HOME_ROOT (the configuration read afresh). */
async function on<T>(node: Node, work: () => Promise<T>): Promise<T> {
  Object.assign(process.env, { DATA_DIR: node.data, HOME_ROOT: node.homes, SYSTEM_USERS: "1" });
  delete (globalThis as { __panelEnv?: unknown }).__panelEnv;
  return work();
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, (performance.now() - started) / 1000];
}

/** A home of `megabytes` (root's, the account's group; its public_html the account's) holding random files. */
function fillHome(home: string, username: string, megabytes: number) {
  const site = path.join(home, "public_html");
  fs.mkdirSync(site, { recursive: true });
  const smallFiles = Math.round((megabytes * MB * 0.1) / (16 * 1024));
  const bigFiles = Math.round(megabytes * 0.9);
  const buffer = Buffer.alloc(MB);
  for (let i = 0; i < smallFiles; i++) {
    const dir = path.join(site, "code", `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `f${i}.php`), randomFillSync(buffer.subarray(0, 16 * 1024)));
  }
  for (let i = 0; i < bigFiles; i++) {
    const dir = path.join(site, "uploads", `m${Math.floor(i / 100)}`);
    if (i % 100 === 0) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `photo-${i}.jpg`), randomFillSync(buffer));
  }
  execFileSync("chown", ["-R", `${username}:${username}`, site]);
  execFileSync("chown", [`root:${username}`, home]);
  fs.chmodSync(home, 0o750);
}

const digest = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

async function main() {
  const { restoreMoveSnapshot, takeMoveSnapshot, forgetMoveRepository } = await import("@/lib/provisioning/move-runs");
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-bench-moves-"));
  fs.chmodSync(root, 0o755);
  const username = `pm${randomBytes(4).toString("hex")}`;
  execFileSync("useradd", ["--no-create-home", "--home-dir", path.join(root, "nowhere"), "--shell", "/usr/sbin/nologin", "--user-group", username]);
  const rows: string[] = [];
  let finalOfOneGigabyte: number | null = null;
  try {
    for (const megabytes of SIZES_MB) {
      const run = path.join(root, `${megabytes}`);
      const source: Node = { data: path.join(run, "source-data"), homes: path.join(run, "source-homes") };
      const target: Node = { data: path.join(run, "target-data"), homes: path.join(run, "target-homes") };
      for (const dir of [source.data, target.data]) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      fillHome(path.join(source.homes, username), username, megabytes);
      const targetHome = path.join(target.homes, username);
      fs.mkdirSync(path.join(targetHome, "public_html"), { recursive: true });
      execFileSync("chown", [`${username}:${username}`, path.join(targetHome, "public_html")]);
      execFileSync("chown", [`root:${username}`, targetHome]);
      fs.chmodSync(targetHome, 0o750);
      const move = { repository: path.join(run, "store", "move-bench"), password: randomBytes(32).toString("base64url") };
      const common = { move, username, folders: ["public_html"], databases: [], database_users: [] };
      // The page cache holds the home as a serving site's would; the first pass also warms restic's.
      const [copy, copySource] = await timed(() => on(source, () => takeMoveSnapshot({ ...common, pass: "copy", copy: null })));
      const [, copyTarget] = await timed(() => on(target, () => restoreMoveSnapshot({ ...common, pass: "copy", copy: null, snapshots: copy, grants: [] })));
      const changed = path.join(source.homes, username, "public_html", "uploads", "m0", "photo-0.jpg");
      fs.writeFileSync(changed, randomBytes(MB));
      const [final, finalSource] = await timed(() => on(source, () => takeMoveSnapshot({ ...common, pass: "final", copy: copy.home })));
      const [, finalTarget] = await timed(() => on(target, () => restoreMoveSnapshot({ ...common, pass: "final", copy: copy.home, snapshots: final, grants: [] })));
      if (digest(changed) !== digest(path.join(targetHome, "public_html", "uploads", "m0", "photo-0.jpg"))) throw new Error(`the final pass of the ${megabytes} MB home did not bring the changed file`);
      const finalSeconds = finalSource + finalTarget;
      if (megabytes === 1024) finalOfOneGigabyte = finalSeconds;
      rows.push(
        `${String(megabytes).padStart(5)} MB | copy ${copySource.toFixed(2)} + ${copyTarget.toFixed(2)} = ${(copySource + copyTarget).toFixed(2)} s | final (1 MB changed) ${finalSource.toFixed(2)} + ${finalTarget.toFixed(2)} = ${finalSeconds.toFixed(2)} s`,
      );
      console.log(rows.at(-1));
      await on(source, () => forgetMoveRepository({ move }));
      await on(target, () => forgetMoveRepository({ move }));
      fs.rmSync(run, { recursive: true, force: true });
    }
    console.log(`\n(m) a move's passes, source + target (tar as the account's user, restic on local disk)`);
    for (const row of rows) console.log(row);
    if (finalOfOneGigabyte !== null) verdict("final pass of the 1 GB home with 1 MB changed, s", finalOfOneGigabyte, 2, "<");
  } finally {
    spawnSync("userdel", [username]);
    spawnSync("groupdel", [username]);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** Runs (m) in a child process (its own configuration). */
export function runMovesBench(): void {
  const result = spawnSync(path.join("node_modules", ".bin", "tsx"), ["bench/moves.ts"], { stdio: "inherit", env: { ...process.env, PANEL_BENCH_MOVES: "1" } });
  if (result.status !== 0) throw new Error(`the moves bench failed (exit ${result.status})`);
}

if (process.env.PANEL_BENCH_MOVES === "1") await main();
