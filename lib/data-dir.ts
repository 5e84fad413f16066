import fs from "node:fs";
import { ConfigError } from "@/lib/env";

// DATA_DIR is the panel's alone (docs/security.md "The panel's data is the panel's"): PGlite's
// cluster (its WAL holds the generated AUTH_SECRET, the TOTP secrets and the admins' password
// hashes), zone files, server blocks, visitor statistics, certificates, the backup password, the
// MariaDB option file. A customer with a shell or PHP reads whatever their uid may read, so
// DATA_DIR is 0700 and nothing in it lets its group or others in: every file the panel makes is
// closed by the process's umask (closeNewFiles), and what an older version or an administrator left
// open is closed at start (closeDataDir). What another program must read (the homes, the ACME
// challenges, the PHP-FPM sockets, the sshd keys, the zone files of a name server) lies outside
// DATA_DIR, with its own modes (lib/env.ts refuses it inside).

/** Group and others get nothing of what the panel makes, unless it gives a mode explicitly. */
const PANEL_UMASK = 0o077;
const CLOSED = 0o077;

/** For the whole process, first thing in an entry point (server.ts, the command line): files and directories made from now on are the panel's alone. */
export function closeNewFiles(): void {
  process.umask(PANEL_UMASK);
}

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = fs.constants;

/** `name` in the directory open as `fd`, resolved by the kernel from that directory (openat): no link on the way is followed. */
const inside = (fd: number, name: string) => `/proc/self/fd/${fd}/${name}`;

/**
 * Takes group and other bits off every directory and regular file below the directory open as
 * `dirFd`, opened one component at a time with O_NOFOLLOW and changed through its descriptor
 * (fchmod): a link is never followed, whatever it points at, and one swapped in midway only
 * makes an open fail. Owner bits are kept (restic's read-only 0400 pack files stay so). Sockets,
 * FIFOs and devices are left as they are: they cannot be opened safely, and the directories
 * above them are closed.
 */
function closeTreeBelow(dirFd: number): void {
  for (const entry of fs.readdirSync(`/proc/self/fd/${dirFd}`, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      let fd: number;
      try {
        fd = fs.openSync(inside(dirFd, entry.name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch (error) {
        if (["ENOENT", "ELOOP", "ENOTDIR"].includes((error as NodeJS.ErrnoException).code ?? "")) continue; // gone or swapped meanwhile
        throw error;
      }
      try {
        closeMode(fd);
        closeTreeBelow(fd);
      } finally {
        fs.closeSync(fd);
      }
    } else if (entry.isFile()) {
      // Most files are closed already: one lstat, and an open only for those to change.
      const stat = fs.lstatSync(inside(dirFd, entry.name), { throwIfNoEntry: false });
      if (!stat?.isFile() || (stat.mode & CLOSED) === 0) continue;
      let fd: number;
      try {
        fd = fs.openSync(inside(dirFd, entry.name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
      } catch (error) {
        if (["ENOENT", "ELOOP"].includes((error as NodeJS.ErrnoException).code ?? "")) continue;
        throw error;
      }
      try {
        if (fs.fstatSync(fd).isFile()) closeMode(fd);
      } finally {
        fs.closeSync(fd);
      }
    }
  }
}

function closeMode(fd: number): void {
  const mode = fs.fstatSync(fd).mode & 0o7777;
  if ((mode & CLOSED) !== 0) fs.fchmodSync(fd, mode & ~CLOSED);
}

/**
 * Closes everything below `dir` to its group and to others (see closeTreeBelow): PGlite's cluster
 * after it was opened (a new cluster's files are written 0666), DATA_DIR at start. Missing → nothing.
 */
export function closeTree(dir: string): void {
  let fd: number;
  try {
    fd = fs.openSync(dir, O_RDONLY | O_DIRECTORY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  try {
    closeTreeBelow(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * At start: DATA_DIR made, or repaired, 0700 and the panel's user's, then everything in it closed
 * (an install an older version left 0755 with PGlite's files 0666 is closed before the server
 * opens anything in it). DATA_DIR itself may be a link the administrator made; nothing below it
 * is followed. A DATA_DIR of another user (who could open it again at any time) stops the start.
 */
export function closeDataDir(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const fd = fs.openSync(dataDir, O_RDONLY | O_DIRECTORY);
  try {
    const stat = fs.fstatSync(fd);
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) {
      throw new ConfigError(`Invalid configuration:\n  DATA_DIR: ${dataDir} belongs to uid ${stat.uid}, not to the panel's user (uid ${uid}), who alone may use it: chown -R ${uid} ${dataDir}`);
    }
    if ((stat.mode & 0o7777) !== 0o700) fs.fchmodSync(fd, 0o700);
    closeTreeBelow(fd);
  } finally {
    fs.closeSync(fd);
  }
}
