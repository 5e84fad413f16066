import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { DEFAULT_PHP_SETTINGS } from "@/lib/php-settings/schemas";
import { fastcgiGet } from "@/lib/provisioning/fastcgi";
import { type Pool, poolSocketPath, reloadPhp, waitForPools, writePool } from "@/lib/provisioning/php-fpm";
import { startWebServers, type WebServers } from "../support/web-servers";

// A pool's new settings serve as soon as waitForPools returns, however late PHP-FPM acts on the
// reload: `systemctl reload` (and `kill -USR2`) only sends the master a signal, and until it acts
// the old workers answer. CI run 16 read the old memory_limit right after a PUT of PHP settings.
// The reload here signals half a second after it returns; seen to fail on the old wait (which
// only waited for the socket to accept): 128M read after the change to 256M.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-php-fpm-reload-"));
const home = path.join(root, "home", "alice");
const reloadScript = path.join(root, "reload-late.sh");
let servers: WebServers;

before(async () => {
  servers = await startWebServers(root);
  Object.assign(process.env, { ...servers.env, HOME_ROOT: path.join(root, "home"), PHP_FPM_RELOAD_COMMAND: reloadScript });
  const [, pid] = servers.env.PHP_FPM_RELOAD_COMMAND.split(" ").slice(-2);
  fs.writeFileSync(reloadScript, `#!/bin/sh\n(sleep 0.5; kill -USR2 ${pid}) >/dev/null 2>&1 &\n`, { mode: 0o755 });
  fs.mkdirSync(path.join(home, "tmp"), { recursive: true });
  fs.writeFileSync(path.join(home, "limit.php"), "<?php echo ini_get('memory_limit');");
  fs.chmodSync(root, 0o755);
});

after(async () => {
  await servers?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

const pool = (memoryLimitMb: number): Pool => ({
  username: "alice",
  version: "8.2",
  user: "www-data",
  listenGroup: "www-data",
  home,
  settings: { ...DEFAULT_PHP_SETTINGS, memory_limit_mb: memoryLimitMb },
});

async function apply(wanted: Pool): Promise<string> {
  assert.equal(await writePool(wanted), true);
  await reloadPhp(["8.2"]);
  await waitForPools([wanted]);
  return fastcgiGet(poolSocketPath("alice", "8.2"), path.join(home, "limit.php"), 5_000);
}

test("a new pool, then a changed one, serve their settings as soon as waitForPools returns", async () => {
  assert.equal(await apply(pool(128)), "128M");
  assert.equal(await apply(pool(256)), "256M");
  assert.equal(await apply(pool(192)), "192M");
});
