import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { env } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { backupParts, restoreDump, restoreHomePath } from "./backup-runs";
import { holdsHomeArchive } from "./home-backup";
import { openTrustedDirectory, removeTreeIn } from "./home-files";
import { databaseName, mysqlProvisioner } from "./mysql";
import { ensureRepository, restic, type ResticSnapshot, snapshotById, snapshotId, snapshotsTagged, withRepository } from "./restic";

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

/**
 * A pass's snapshots, by id: the home's (null when the account has none) and each database's
 * dump, with the MariaDB password hash of each database user (null: none the target can take).
 * The source answers it; the panel checks it against what it asked (lib/nodes/answers.ts) before
 * it hands it to the target, which takes from it only what the panel's own job names.
 */
export interface MoveSnapshots {
  home: string | null;
  dumps: { database: string; snapshot: string }[];
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
      home: parts.get("part:home")?.id ?? null,
      dumps: input.databases.flatMap((database) => {
        const snapshot = parts.get(`db:${database}`);
        return snapshot ? [{ database, snapshot: snapshot.id }] : [];
      }),
      password_hashes,
    };
  });
}

/**
 * The snapshot `id` as the move's repository describes it, when it is the part `part` of pass
 * `pass`: what the target restores is what the repository says the snapshot is, never what the
 * source said of it (its paths above all, which reach restic's command line).
 */
async function partOfPass(id: string, part: string, pass: MovePass): Promise<ResticSnapshot> {
  const snapshot = await snapshotById(id);
  if (!snapshot?.tags?.includes(part) || !snapshot.tags.includes(`pass:${pass}`)) {
    throw new AppError("VALIDATION", `the move's repository holds no ${part} snapshot ${id.slice(0, 8)} of this pass`);
  }
  return snapshot;
}

/**
 * The target's side of a pass: the account's databases made afresh on this machine's MariaDB
 * (its users with the source's password hashes, their grants), the site folders of the home
 * written back by the account's own user (./home-restore.ts), each dump loaded by a user of its
 * database only. Every name comes from the panel's job — `databases` and `database_users` are the
 * account's own, from the panel's records — never from the source's answer: a hash is taken for a
 * user the job names, a dump for a database it names, and each snapshot is read from the
 * repository itself. Run again, it gives the same result: the target is a copy until the switch.
 */
export async function restoreMoveSnapshot(
  input: {
    move: MoveRepository;
    pass: MovePass;
    username: string;
    snapshots: MoveSnapshots;
    folders: string[];
    databases: string[];
    database_users: string[];
    grants: { username: string; database: string; privileges: string[] }[];
  },
  signal?: AbortSignal,
): Promise<null> {
  const { snapshots } = input;
  const named = new Set(input.databases);
  for (const grant of input.grants) {
    if (!named.has(grant.database) || !input.database_users.includes(grant.username)) throw new AppError("VALIDATION", "a grant of the move names a database or user it does not move");
  }
  // The server's own databases are refused by name before anything is changed (./mysql.ts).
  for (const database of input.databases) databaseName(database);
  if (input.databases.length || input.database_users.length) {
    const server = mysqlProvisioner();
    if (!server) throw new AppError("VALIDATION", "the account has databases but this node has no MYSQL_PROVISION_URL");
    for (const database of input.databases) {
      await server.dropDatabase(database);
      await server.createDatabase(database);
    }
    for (const username of input.database_users) {
      await server.dropUser(username);
      await server.createUser(username, randomUUID(), { locked: false });
      const hash = Object.hasOwn(snapshots.password_hashes, username) ? snapshots.password_hashes[username] : null;
      if (hash) await server.setPasswordHash(username, hash);
    }
    for (const grant of input.grants) await server.grant(grant.username, grant.database, grant.privileges);
  }
  await inMoveRepository(input.move, async () => {
    if (snapshots.home) {
      const home = await partOfPass(snapshots.home, "part:home", input.pass);
      if (!holdsHomeArchive(home)) throw new AppError("VALIDATION", "the move's home snapshot is not the home's archive");
      for (const folder of input.folders) await restoreHomePath({ username: input.username, snapshot: home, parts: [folder] }, signal);
    }
    for (const database of input.databases) {
      const dump = snapshots.dumps.find((candidate) => candidate.database === database);
      if (!dump) continue;
      const snapshot = await partOfPass(dump.snapshot, `db:${database}`, input.pass);
      await restoreDump({ snapshot, database, into: database }, signal);
    }
  });
  return null;
}

/**
 * The move's repository emptied (and removed, when it is a path on this machine): the move has
 * ended. Every node writes the move store, so a folder of it may be swapped for a link while it
 * goes: it is removed without following any (removeTreeIn, ./home-files.ts), from its parent
 * opened as the administrator's.
 */
export async function forgetMoveRepository(input: { move: MoveRepository }): Promise<null> {
  const { repository } = input.move;
  if (path.isAbsolute(repository)) {
    const parent = await openTrustedDirectory(path.dirname(repository));
    if (!parent) return null;
    try {
      await removeTreeIn(parent, path.basename(repository));
    } finally {
      await parent.close();
    }
    return null;
  }
  await inMoveRepository(input.move, async () => {
    const snapshots = await snapshotsTagged("pass:copy").catch(() => []);
    const finals = await snapshotsTagged("pass:final").catch(() => []);
    const ids = [...snapshots, ...finals].map((snapshot) => snapshot.id);
    if (ids.length) await restic(["forget", "--prune", "--", ...ids.map(snapshotId)]);
  });
  return null;
}
