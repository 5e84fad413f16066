import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { backupParts, restoreDump, restoreHomePath } from "./backup-runs";
import { mysqlProvisioner } from "./mysql";
import { ensureRepository, restic, type ResticSnapshot, snapshotsTagged, withRepository } from "./restic";

// A move's work on the two machines (docs/nodes.md "Moving accounts"), run by lib/moves/driver.ts
// as long jobs: the source takes a snapshot of the account into the move's own restic
// repository, the target restores it. That repository holds this one account, under a password
// made for this move and forgotten when it ends: a target reads the account it is given and no
// other — the nodes' own backup repositories and passwords never leave them.

/** The move's repository as a job carries it; the password is written to a 0600 file for restic, never its environment. */
export interface MoveRepository {
  repository: string;
  password: string;
}

/** One pass of a move: `copy` while the source serves, `final` once it is suspended. */
export type MovePass = "copy" | "final";

/** A pass's snapshots: the home (null when the account has none) and each database's dump. */
export interface MoveSnapshots {
  home: ResticSnapshot | null;
  dumps: { database: string; snapshot: ResticSnapshot }[];
  /** The MariaDB password hash of each database user (null: none the target can take). */
  password_hashes: Record<string, string | null>;
}

async function inMoveRepository<T>(move: MoveRepository, work: () => Promise<T>): Promise<T> {
  const dir = path.join(env().dataDir, "moves");
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const passwordFile = path.join(dir, `${randomUUID()}.password`);
  await fs.writeFile(passwordFile, `${move.password}\n`, { mode: 0o600, flag: "wx" });
  try {
    return await withRepository({ repository: move.repository, passwordFile }, work);
  } finally {
    await fs.rm(passwordFile, { force: true });
  }
}

/** The newest snapshot of each part (`part:home`, `db:<name>`) with the pass's tag. */
function newestParts(snapshots: ResticSnapshot[]): Map<string, ResticSnapshot> {
  const parts = new Map<string, ResticSnapshot>();
  for (const snapshot of [...snapshots].sort((a, b) => a.time.localeCompare(b.time))) {
    const part = snapshot.tags?.find((tag) => tag === "part:home" || tag.startsWith("db:"));
    if (part) parts.set(part, snapshot);
  }
  return parts;
}

/**
 * The source's side of a pass: the home (as its own user reads it) and each of `databases`
 * into the move's repository, as a backup takes them (./backup-runs.ts), and the password hash
 * of each of `database_users`.
 */
export async function takeMoveSnapshot(input: {
  move: MoveRepository;
  pass: MovePass;
  username: string;
  databases: string[];
  database_users: string[];
}): Promise<MoveSnapshots> {
  return inMoveRepository(input.move, async () => {
    await ensureRepository();
    // A run of its own for each attempt: a part that failed forgets only what this attempt stored.
    const run = `run:${input.pass}-${randomUUID()}`;
    const { password_hashes } = await backupParts({ username: input.username, tags: [`pass:${input.pass}`, run], databases: input.databases, database_users: input.database_users });
    const parts = newestParts(await snapshotsTagged(run));
    return {
      home: parts.get("part:home") ?? null,
      dumps: input.databases.flatMap((database) => {
        const snapshot = parts.get(`db:${database}`);
        return snapshot ? [{ database, snapshot }] : [];
      }),
      password_hashes,
    };
  });
}

/**
 * The target's side of a pass: the account's databases made afresh on this machine's MariaDB
 * (its users with the source's password hashes, their grants), the site folders of the home
 * written back by the account's own user (./home-restore.ts), each dump loaded by a user of its
 * database only. Run again, it gives the same result: the target is a copy until the switch.
 */
export async function restoreMoveSnapshot(
  input: {
    move: MoveRepository;
    username: string;
    snapshots: MoveSnapshots;
    folders: string[];
    databases: string[];
    grants: { username: string; database: string; privileges: string[] }[];
  },
  signal?: AbortSignal,
): Promise<null> {
  const { snapshots } = input;
  const users = Object.keys(snapshots.password_hashes);
  if (input.databases.length || users.length) {
    const server = mysqlProvisioner();
    if (!server) throw new AppError("VALIDATION", "the account has databases but this node has no MYSQL_PROVISION_URL");
    for (const database of input.databases) {
      await server.dropDatabase(database);
      await server.createDatabase(database);
    }
    for (const username of users) {
      await server.dropUser(username);
      await server.createUser(username, randomUUID(), { locked: false });
      const hash = snapshots.password_hashes[username];
      if (hash) await server.setPasswordHash(username, hash);
    }
    for (const grant of input.grants) await server.grant(grant.username, grant.database, grant.privileges);
  }
  await inMoveRepository(input.move, async () => {
    if (snapshots.home) {
      for (const folder of input.folders) await restoreHomePath({ username: input.username, snapshot: snapshots.home, parts: [folder] }, signal);
    }
    for (const { database, snapshot } of snapshots.dumps) await restoreDump({ snapshot, database, into: database }, signal);
  });
  return null;
}

/** The move's repository emptied (and removed, when it is a path on this machine): the move has ended. */
export async function forgetMoveRepository(input: { move: MoveRepository }): Promise<null> {
  const { repository } = input.move;
  if (path.isAbsolute(repository)) {
    await fs.rm(repository, { recursive: true, force: true });
    return null;
  }
  await inMoveRepository(input.move, async () => {
    const snapshots = await snapshotsTagged("pass:copy").catch(() => []);
    const finals = await snapshotsTagged("pass:final").catch(() => []);
    const ids = [...snapshots, ...finals].map((snapshot) => snapshot.id);
    if (ids.length) await restic(["forget", "--prune", ...ids]);
  });
  return null;
}
