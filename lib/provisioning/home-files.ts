import { randomBytes } from "node:crypto";
import fs, { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import path from "node:path";
import { AppError, validationError } from "@/lib/errors";
import { childExit, startChild, toolEnv } from "./system";

// THE RULE: no root operation inside a home follows a link the customer controls.
//
// The panel runs as root, and everything below a home is the customer's to change at any moment,
// including swapping a directory for a symbolic link between our check and our use. So no path
// inside a home is handed whole to the kernel: each step opens the next component relative to
// the handle of the one before (Linux's openat, written /proc/self/fd/<fd>/<name>: the kernel
// starts from the directory already open, not from a name the customer can change) with
// O_NOFOLLOW, and acts on the handle it got (fchown, fchmod, fstat, read). mkdir, rmdir and
// unlink never follow their last component, so they are safe relative to a held handle too. A
// link (or a file where a directory should be) on the way → LinkInHomeError, a 422, and nothing
// is done past it. The directories that hold the homes and the logs (HOME_ROOT, ACCESS_LOG_DIR)
// are the administrator's and trusted; a home itself is opened like any other component.
// Programs that walk or read on the panel's behalf (du, rm, GoAccess) get an open descriptor
// (fd 3…, /dev/fd/3 in the child: a child's /proc/self is its own), not a path.
//
// Directories cannot be hard-linked, and fs.protected_hardlinks (the kernel's default on Debian)
// stops a customer from hard-linking a file they do not own, so a handle opened here is the
// customer's own directory or file. Later features that touch a home as root (authorized_keys,
// cron output, restores) use these functions, never fs on a joined path.

export interface Ownership {
  uid: number;
  gid: number;
  mode: number;
}

type Reason = "a symbolic link" | "not a directory" | "not a regular file";

/** A path inside a home the panel will not pass through (422); `forField` names the request's field. */
export class LinkInHomeError extends AppError {
  constructor(
    readonly relativePath: string,
    readonly reason: Reason,
  ) {
    super("VALIDATION", `${relativePath} is ${reason}: the panel does not follow links among a customer's files`);
    this.name = "LinkInHomeError";
  }

  forField(field: string): AppError {
    return validationError(field, `passes through ${this.relativePath}, which is ${this.reason} (the panel does not follow links among a customer's files)`);
  }
}

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// O_NONBLOCK: a FIFO the customer put in place of a file opens at once (and is refused) instead of hanging.
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

/** The path by which the kernel resolves `name` inside the directory open as `dir` (openat). */
function inside(dir: FileHandle, name?: string): string {
  if (name === undefined) return `/proc/self/fd/${dir.fd}`;
  if (!name || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    throw new Error(`not a single path component: ${JSON.stringify(name)}`);
  }
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** The components of a relative path; an absolute path or `..` is a bug of the caller's checks. */
export function pathComponents(relative: string): string[] {
  const parts = relative.split("/").filter((part) => part && part !== ".");
  if (path.isAbsolute(relative) || parts.includes("..")) throw new Error(`not a path inside a home: ${relative}`);
  return parts;
}

/** Why `name` could not be opened as wanted (for the message: the decision was the failed open). */
async function refusal(dir: FileHandle, name: string, shownAs: string, wanted: "directory" | "file"): Promise<LinkInHomeError> {
  const stat = await fs.promises.lstat(inside(dir, name)).catch(() => null);
  if (!stat || stat.isSymbolicLink()) return new LinkInHomeError(shownAs, "a symbolic link");
  return new LinkInHomeError(shownAs, wanted === "directory" ? "not a directory" : "not a regular file");
}

/** A trusted directory (HOME_ROOT, ACCESS_LOG_DIR: the administrator's, never a customer's); missing → null. */
export async function openTrustedDirectory(dir: string): Promise<FileHandle | null> {
  try {
    return await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    throw error;
  }
}

/** The directory `name` in `dir`, never through a link (LinkInHomeError); missing → null. */
export async function openDirectoryIn(dir: FileHandle, name: string, shownAs = name): Promise<FileHandle | null> {
  try {
    return await open(inside(dir, name), DIRECTORY_FLAGS);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    if (errorCode(error) === "ENOTDIR" || errorCode(error) === "ELOOP") throw await refusal(dir, name, shownAs, "directory");
    throw error;
  }
}

/**
 * The directory `name` in `dir`, made when missing. A directory made here is given `ownership`
 * through its handle; an existing one only with `repair` (createHome puts a home's own
 * directories right each time). A link in its place → LinkInHomeError, nothing changed.
 */
export async function makeDirectoryIn(
  dir: FileHandle,
  name: string,
  ownership: Ownership,
  options: { repair?: boolean; shownAs?: string } = {},
): Promise<FileHandle> {
  const shownAs = options.shownAs ?? name;
  const made = await fs.promises.mkdir(inside(dir, name), 0o700).then(
    () => true,
    (error) => {
      if (errorCode(error) === "EEXIST") return false;
      throw error;
    },
  );
  const handle = await openDirectoryIn(dir, name, shownAs);
  // Removed between mkdir and open: only the customer can, and then nothing is done.
  if (!handle) throw new LinkInHomeError(shownAs, "not a directory");
  try {
    if (made || options.repair) {
      await handle.chown(ownership.uid, ownership.gid);
      await handle.chmod(ownership.mode);
    }
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * The directory at `relative` below `dir`, opened component by component; with `ownership`, each
 * missing one is made and given it (existing ones are left as they are). Missing (without
 * `ownership`) → null. The caller closes what it gets.
 */
export async function openDirectoryPath(dir: FileHandle, relative: string, ownership?: Ownership): Promise<FileHandle | null> {
  let current = dir;
  const walked: string[] = [];
  try {
    for (const part of pathComponents(relative)) {
      walked.push(part);
      const shownAs = walked.join("/");
      const next = ownership ? await makeDirectoryIn(current, part, ownership, { shownAs }) : await openDirectoryIn(current, part, shownAs);
      if (current !== dir) await current.close();
      current = dir;
      if (!next) return null;
      current = next;
    }
    return current === dir ? await open(inside(dir), DIRECTORY_FLAGS) : current;
  } catch (error) {
    if (current !== dir) await current.close();
    throw error;
  }
}

/** The regular file `name` in `dir`, read-only, never through a link; missing → null. */
export async function openFileIn(dir: FileHandle, name: string, shownAs = name): Promise<FileHandle | null> {
  let handle: FileHandle;
  try {
    handle = await open(inside(dir, name), FILE_FLAGS);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    if (errorCode(error) === "ELOOP") throw await refusal(dir, name, shownAs, "file");
    throw error;
  }
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    throw new LinkInHomeError(shownAs, "not a regular file");
  }
  return handle;
}

/**
 * The regular file `name` in `dir`, made empty when missing, and given `ownership` through its
 * handle (a file the account's processes write into a root-owned directory: cron output, PHP's
 * error log). A link or anything but a regular file in its place → LinkInHomeError.
 */
export async function makeFileIn(dir: FileHandle, name: string, ownership: Ownership): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(inside(dir, name), constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  } catch (error) {
    if (errorCode(error) === "ELOOP") throw await refusal(dir, name, name, "file");
    throw error;
  }
  try {
    if (!(await handle.stat()).isFile()) throw new LinkInHomeError(name, "not a regular file");
    await handle.chown(ownership.uid, ownership.gid);
    await handle.chmod(ownership.mode);
  } finally {
    await handle.close();
  }
}

/**
 * `contents` as the regular file `name` in `dir`, given `ownership`: written under a new name
 * (O_EXCL, never through a link) and renamed over `name` (a rename replaces a link, never follows
 * it). For a directory only root can write in (the home): a customer's directory would let them
 * race the rename.
 */
export async function writeFileIn(dir: FileHandle, name: string, contents: string, ownership: Ownership): Promise<void> {
  const temporary = `.${name}.${randomBytes(6).toString("hex")}`;
  const handle = await open(inside(dir, temporary), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    await handle.writeFile(contents);
    await handle.chown(ownership.uid, ownership.gid);
    await handle.chmod(ownership.mode);
  } catch (error) {
    await handle.close();
    await fs.promises.rm(inside(dir, temporary), { force: true });
    throw error;
  }
  await handle.close();
  await fs.promises.rename(inside(dir, temporary), inside(dir, name));
}

/** Whether `dir` holds an entry `name` of any kind (a link is not followed: it counts as one). */
export function entryExistsIn(dir: FileHandle, name: string): Promise<boolean> {
  return fs.promises.lstat(inside(dir, name)).then(
    () => true,
    () => false,
  );
}

/** The names in the directory open as `dir`. */
export function listDirectory(dir: FileHandle): Promise<string[]> {
  return fs.promises.readdir(inside(dir));
}

/**
 * Removes `name` from `dir` and all it holds, by GNU rm given `dir` as its fd 3 (/dev/fd/3/<name>
 * in the child). rm walks with fts on openat and O_NOFOLLOW and checks that each directory it
 * enters is the one it looked at, so a link is unlinked, never followed, even one swapped in
 * midway; --one-file-system: nothing mounted inside is entered. Any depth, no descriptor per
 * level in the panel. Missing → nothing.
 */
export async function removeTreeIn(dir: FileHandle, name: string): Promise<void> {
  inside(dir, name); // one component of `dir`, nothing else, before rm sees it
  await runOnDescriptors("rm", ["-rf", "--one-file-system", "--", `/dev/fd/3/${name}`], [dir], 30 * 60_000);
}

/**
 * Runs `program` with `descriptors` as its fds 3, 4… (/dev/fd/3… in its arguments: a child's
 * /proc/self is its own); its standard output. A failure → Error with the end of its stderr.
 */
export async function runOnDescriptors(program: string, args: string[], descriptors: FileHandle[], timeoutMs: number): Promise<string> {
  const child = startChild(program, args, { env: toolEnv(), stdio: ["ignore", "pipe", "pipe", ...descriptors.map((handle) => handle.fd)], timeoutMs });
  let stdout = "";
  child.stdout!.on("data", (chunk) => (stdout += chunk));
  const exit = await childExit(child);
  if (exit.code === 0) return stdout;
  throw new Error(`${program} ${args.join(" ")} failed (${exit.signal ?? `exit ${exit.code}`}): ${exit.stderr}`);
}
