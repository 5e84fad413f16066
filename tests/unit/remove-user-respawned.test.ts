import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { createSystemUser, removeSystemUser } from "@/lib/provisioning/homes";
import { linuxUserExists } from "@/lib/provisioning/passwd";
import { removeLinuxUsers } from "../support/web-servers";

// A termination removes the account's Linux user after killing its processes, and userdel refuses
// a user any process still runs as. A PHP-FPM master whose reload is still under way starts the
// removed pool's workers again as they are killed: CI (a run at dfbb544) saw "The Linux user could
// not be removed" on a loaded machine. Here root's parent process does the same for 1.5 s — the
// user's process is started again as soon as it dies — then stops. A process started again is
// root's until setpriv gives it the user's id, so pkill can find none just before one becomes the
// user's and userdel meets it (CI at 3906101, on a loaded machine). The removal kills and removes
// again while userdel finds a process, for up to 10 s. On the code before dfbb544 (one kill, then
// userdel) userdel met the process started again at once.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-user-respawned-"));
const username = `zb${process.pid % 100_000}`;

after(() => {
  removeLinuxUsers([username]);
  fs.rmSync(root, { recursive: true, force: true });
});

test("a user whose process is started again as it is killed is removed once none is started any more", async () => {
  await createSystemUser(username, path.join(root, username), "/usr/sbin/nologin");
  const uid = execFileSync("id", ["-u", username], { encoding: "utf8" }).trim();
  const gid = execFileSync("id", ["-g", username], { encoding: "utf8" }).trim();
  const respawning = `
    use POSIX ":sys_wait_h"; use Time::HiRes qw(time sleep);
    sub start { if (fork() == 0) { exec("setpriv", "--reuid=${uid}", "--regid=${gid}", "--clear-groups", "sleep", "1000") } }
    start(); my $until = time + 1.5;
    while (time < $until) { start() if waitpid(-1, WNOHANG) > 0; sleep(0.001) }
    while (wait() != -1) {} sleep 30;`;
  const parent = spawn("perl", ["-e", respawning], { stdio: "ignore" });
  try {
    // The user's process is running before the removal begins.
    for (let i = 0; i < 100 && spawnSync("pgrep", ["--euid", username]).status !== 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await removeSystemUser(username);
    assert.equal(await linuxUserExists(username), false);
  } finally {
    parent.kill("SIGKILL");
  }
});
