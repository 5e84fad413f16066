import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { domains, hostingAccounts, plans } from "@/db/schema";
import { createZone, nextSerial } from "@/lib/dns/zone";
import { syncAllZoneFiles } from "@/lib/dns/zone-file-sync";
import { syncAllSites } from "@/lib/hosting/service";
import { verdict, withBenchDatabase } from "./support";
import { localNodeId } from "@/lib/nodes/service";

// (h) Start-up at scale: 10,000 domains (1,000 accounts × 10) on PostgreSQL, the work server.ts
// does before it listens — every zone file and every nginx server block from the database, the
// real `nginx -t` over all of them (a configuration of its own), one reload, the zone files
// written while the test runs — first on an empty disk (everything written), then again as a
// restart finds it (nothing changed: nothing written, no test, no reload). Target: each < 5 s.
// Runs in a child process of its own (runStartupBench): the configuration below must be the
// one env() reads first.

const ACCOUNTS = 1_000;
const DOMAINS_PER_ACCOUNT = 10;

/**
 * A new ext4 file system with its journal (a file of the temporary directory on a loop device),
 * as a server's disks are, for the files of (h). This machine's root file system has no journal,
 * and there ext4 avoids reusing an inode deleted in the last 60–360 s (recently_deleted() in
 * find_inode_bit, perf): every file made soon after thousands were deleted, as by the previous
 * run's clean-up, scans them all first (the same first start twice in /tmp: 3.9 s, then 19.8 s).
 * Needs root and a loop device; without them the bench runs in the temporary directory and says so.
 */
function scratchFileSystem(): { dir: string; remove: () => void } {
  const image = path.join(os.tmpdir(), `panel-bench-startup-${process.pid}.ext4`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-bench-startup-"));
  const remove = () => {
    spawnSync("umount", [dir]);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(image, { force: true });
  };
  fs.writeFileSync(image, "");
  fs.truncateSync(image, 4 * 1024 ** 3);
  const made = spawnSync("mkfs.ext4", ["-q", "-F", image], { encoding: "utf8" });
  const mounted = made.status === 0 && spawnSync("mount", ["-o", "loop", image, dir], { encoding: "utf8" }).status === 0;
  if (!mounted) {
    fs.rmSync(image, { force: true });
    console.log(`(h) runs in ${dir}: no ext4 file system of its own could be mounted (root and a loop device are needed)`);
  } else {
    console.log("(h) runs on a new ext4 file system of its own (a loop device)");
  }
  return { dir, remove };
}

async function main() {
  const scratch = scratchFileSystem();
  const root = scratch.dir;
  const nginxConf = path.join(root, "nginx.conf");
  // The server_names hash sized as docs/web-hosting.md "nginx.conf" tells the admin to.
  fs.writeFileSync(
    nginxConf,
    [
      `pid ${root}/nginx.pid;`,
      `error_log ${root}/error.log;`,
      "events {}",
      "http {",
      "  server_names_hash_max_size 65536;",
      "  server_names_hash_bucket_size 128;",
      `  include ${root}/sites/*.conf;`,
      "}",
      "",
    ].join("\n"),
  );
  Object.assign(process.env, {
    // The homes and the sockets' directory must lie outside DATA_DIR (lib/env.ts).
    DATA_DIR: path.join(root, "data"),
    WEB_SERVER: "nginx",
    NGINX_SITES_DIR: path.join(root, "sites"),
    NGINX_TEST_COMMAND: `nginx -t -q -c ${nginxConf} -p ${root}`,
    // No nginx runs here: the reload is the one step not measured.
    NGINX_RELOAD_COMMAND: "true",
    // No nginx runs here: no master whose new workers a reload would wait for.
    NGINX_PID_FILE: "/dev/null",
    ZONES_DIR: path.join(root, "zones"),
    HOME_ROOT: path.join(root, "home"),
    ACCESS_LOG_DIR: path.join(root, "logs"),
    PHP_FPM_POOL_DIR: path.join(root, "pools", "{version}"),
    PHP_FPM_SOCKET_DIR: path.join(root, "run"),
  });
  try {
    await withBenchDatabase("postgres", async ({ db }) => {
      const [plan] = await db.select({ id: plans.id }).from(plans);
      const nodeId = await localNodeId(db);
      const accounts = await db
        .insert(hostingAccounts)
        .values(Array.from({ length: ACCOUNTS }, (_, i) => ({ username: `bench${i}`, domain: `bench${i}.example`, planId: plan.id, nodeId })))
        .returning({ id: hostingAccounts.id, username: hostingAccounts.username });
      await db.transaction(async (tx) => {
        for (const account of accounts) {
          const rows = await tx
            .insert(domains)
            .values(
              Array.from({ length: DOMAINS_PER_ACCOUNT }, (_, i) => ({
                accountId: account.id,
                domain: i === 0 ? `${account.username}.example` : `site${i}.${account.username}.example`,
                domainType: "domain" as const,
                domainPath: i === 0 ? "public_html" : `public_html/site${i}`,
                soaSerial: nextSerial(0),
              })),
            )
            .returning();
          for (const row of rows) await createZone(tx, row);
        }
      });
      // As server.ts runs them: the zone files written while `nginx -t` tests the sites.
      const timed = async (label: string) => {
        const started = performance.now();
        let zoneFilesSeconds = 0;
        await syncAllSites(db, async () => {
          const zonesStarted = performance.now();
          await syncAllZoneFiles(db);
          zoneFilesSeconds = (performance.now() - zonesStarted) / 1000;
        });
        const seconds = (performance.now() - started) / 1000;
        console.log(`${label}: ${seconds.toFixed(2)} s, of which the zone files ${zoneFilesSeconds.toFixed(2)} s (during nginx -t, or after the sites when there is no test)`);
        return seconds;
      };
      const first = await timed("first start");
      const written = fs.readdirSync(path.join(root, "sites")).length;
      if (written !== ACCOUNTS * DOMAINS_PER_ACCOUNT) throw new Error(`expected ${ACCOUNTS * DOMAINS_PER_ACCOUNT} server blocks, found ${written}`);
      const restart = await timed("restart");
      console.log(`\n(h) start-up work with ${written} domains (zone files + server blocks + nginx -t), PostgreSQL`);
      verdict("first start, every file written (s)", first, 5, "<");
      verdict("restart, nothing changed (s)", restart, 5, "<");
    });
  } finally {
    scratch.remove();
  }
}

/** Runs (h) in a child process (its own configuration). */
export function runStartupBench(): void {
  const result = spawnSync(path.join("node_modules", ".bin", "tsx"), ["bench/startup.ts"], {
    stdio: "inherit",
    env: { ...process.env, PANEL_BENCH_STARTUP: "1" },
  });
  if (result.status !== 0) throw new Error(`the start-up bench failed (exit ${result.status})`);
}

if (process.env.PANEL_BENCH_STARTUP === "1") await main();
