import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { AppError } from "@/lib/errors";
import { restoreDump } from "./backup-runs";
import { holdsHomeArchive } from "./home-backup";
import { openTrustedDirectory, removeTreeIn } from "./home-files";
import { beginFinalArchive, dumpHomeArchive, extractMoveArchive, foldersInArchive, forgetMoveFiles, isWholeArchive, keepLevelZero, moveFilesDir, pruneOldMoveFiles, refuseChanges, refusedTag, storeMoveHome } from "./move-archive";
import { databaseName, mysqlProvisioner, startDatabaseDump } from "./mysql";
import { ensureRepository, restic, type ResticSnapshot, snapshotById, snapshotId, snapshotsById, snapshotsTagged, tagOption, withRepository } from "./restic";

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
  const dir = moveFilesDir();
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

/** Resolves once every one of `work` has ended (none is left running), with the first failure when one failed. */
async function allEnded(work: Promise<unknown>[]): Promise<void> {
  for (const result of await Promise.allSettled(work)) if (result.status === "rejected") throw result.reason;
}

/**
 * mariadb-dump of one database (whole, each pass) piped into the move's repository with `tags`
 * (and `db:<name>`); a dump that failed forgets what restic stored of the run.
 */
async function storeDatabase(database: string, tags: string[]): Promise<void> {
  const dump = await startDatabaseDump(database);
  const stored = restic(["backup", "--stdin", `--stdin-filename=${database}.sql`, ...[...tags, `db:${database}`].map(tagOption)], dump.stdout);
  const [dumpResult, storeResult] = await Promise.allSettled([dump.done, stored]);
  if (dumpResult.status === "rejected") {
    const run = tags.find((tag) => tag.startsWith("run:"));
    if (run) await restic(["forget", tagOption(run)]).catch(() => undefined);
    throw dumpResult.reason;
  }
  if (storeResult.status === "rejected") throw storeResult.reason;
}

/**
 * The source's side of a pass: the account's site folders `folders` (as its own user reads them)
 * and each of `databases` into the move's repository, and the password hash of each of
 * `database_users`. The copy pass archives the folders whole and keeps tar's listing of them
 * (./move-archive.ts); the final pass, given the home snapshot of the copy the target holds
 * (`copy`), archives only what changed since that copy began.
 */
export async function takeMoveSnapshot(input: {
  move: MoveRepository;
  pass: MovePass;
  username: string;
  folders: string[];
  copy: string | null;
  databases: string[];
  database_users: string[];
}): Promise<MoveSnapshots> {
  await pruneOldMoveFiles();
  return inMoveRepository(input.move, async () => {
    // The copy pass made the repository: the final one, while the site is down, does not ask again.
    if (input.pass === "copy") await ensureRepository();
    const server = mysqlProvisioner();
    if (input.databases.length && !server) throw new AppError("VALIDATION", "the account has databases but MYSQL_PROVISION_URL is not set");
    // A run of its own for each attempt: a part that failed forgets only what this attempt stored.
    const tags = [`pass:${input.pass}`, `run:${input.pass}-${randomUUID()}`];
    const copy = input.pass === "final" ? input.copy : null;
    const storeHome = (against: string | null) => storeMoveHome({ repository: input.move.repository, username: input.username, folders: input.folders, tags, copy: against });
    // The home and each database side by side: restic's own start (its key's derivation, about
    // half a second) is paid once for them all rather than once after another.
    const homeStored = storeHome(copy);
    await allEnded([homeStored, ...input.databases.map((database) => storeDatabase(database, tags))]);
    let home = await homeStored;
    const password_hashes: Record<string, string | null> = {};
    for (const user of input.database_users) password_hashes[user] = (await server?.passwordHash(user)) ?? null;
    // What the run stored, and — in the same listing — whether the target said it could not write
    // an archive of changes onto this copy (./move-archive.ts): then the home is taken again, whole.
    const ofRun = (listed: ResticSnapshot[]) => newestParts(listed.filter((snapshot) => snapshot.tags?.includes(tags[1])));
    let listed = await snapshotsTagged(tags[1], ...(copy ? [refusedTag(copy)] : []));
    if (home && home.changes && copy && listed.some((snapshot) => snapshot.tags?.includes(refusedTag(copy)))) {
      const changes = ofRun(listed).get("part:home");
      if (changes) await restic(["forget", "--", snapshotId(changes.id)]);
      home = await storeHome(null);
      listed = await snapshotsTagged(tags[1]);
    }
    const parts = ofRun(listed);
    const homeSnapshot = home ? (parts.get("part:home")?.id ?? null) : null;
    if (input.pass === "copy" && homeSnapshot && home) await keepLevelZero(input.move.repository, homeSnapshot, home.listing);
    return {
      home: homeSnapshot,
      dumps: input.databases.flatMap((database) => {
        const snapshot = parts.get(`db:${database}`);
        return snapshot ? [{ database, snapshot: snapshot.id }] : [];
      }),
      password_hashes,
    };
  });
}

/**
 * The snapshots `ids` as the move's repository describes them (./restic.ts snapshotsById), asked
 * once for a pass; `part` (partOfPass) then checks each against what it is to be.
 */
type Described = Promise<Map<string, ResticSnapshot>>;

/**
 * The snapshot `id` as the move's repository describes it, when it is the part `part` of pass
 * `pass`: what the target restores is what the repository says the snapshot is, never what the
 * source said of it (its paths above all, which reach restic's command line).
 */
async function partOfPass(described: Described, id: string, part: string, pass: MovePass): Promise<ResticSnapshot> {
  const snapshot = (await described).get(id);
  if (!snapshot?.tags?.includes(part) || !snapshot.tags.includes(`pass:${pass}`)) {
    throw new AppError("VALIDATION", `the move's repository holds no ${part} snapshot ${id.slice(0, 8)} of this pass`);
  }
  return snapshot;
}

/**
 * The home snapshot `copy` when it is the move's copy pass of the home (the copy the target was
 * given); null when it is not (the copy had no home: its first snapshot is a dump).
 */
async function copyOfHome(copy: string | null): Promise<ResticSnapshot | null> {
  if (!copy) return null;
  const snapshot = await snapshotById(copy);
  return snapshot?.tags?.includes("part:home") && snapshot.tags.includes("pass:copy") && holdsHomeArchive(snapshot) ? snapshot : null;
}

/**
 * The pass's home archive written into the site folders (./move-archive.ts). restic's dump starts
 * while the repository is asked what the snapshot is (`described`), and reaches the account's tar
 * only once it has answered: a snapshot of the pass, home.tar, which names the site folders it
 * holds. A whole archive (the copy's, a final taken whole) is written into those folders emptied
 * first (by the account's user), so that nothing an earlier pass left stands in its way.
 */
async function restoreHome(input: { username: string; folders: string[]; id: string; pass: MovePass }, described: Described, signal?: AbortSignal): Promise<void> {
  const dump = await dumpHomeArchive(input.id, signal);
  let held: string[] | null;
  let whole = input.pass === "copy";
  try {
    const snapshot = await partOfPass(described, input.id, "part:home", input.pass);
    if (!holdsHomeArchive(snapshot)) throw new AppError("VALIDATION", "the move's home snapshot is not the home's archive");
    held = foldersInArchive(snapshot);
    whole ||= isWholeArchive(snapshot);
  } catch (error) {
    dump.stdout.destroy();
    await dump.done.catch(() => undefined);
    throw error;
  }
  await extractMoveArchive({ username: input.username, folders: input.folders, held, whole, archive: dump, signal });
}

/**
 * The final pass's home on the target. Its archive of changes is applied onto the copy: when this
 * node has begun to apply one before, the copy is written back whole first. When writing it fails,
 * the node says so in the move's repository, and the source takes the next final whole.
 */
async function restoreFinalHome(input: { username: string; folders: string[]; id: string; copy: string | null; repository: string }, described: Described, signal?: AbortSignal): Promise<void> {
  const home = { username: input.username, folders: input.folders };
  const holdsChanges = async () => !isWholeArchive(await partOfPass(described, input.id, "part:home", "final"));
  const begun = await beginFinalArchive(input.repository);
  try {
    const copy = begun && (await holdsChanges()) ? await copyOfHome(input.copy) : null;
    if (copy) await restoreHome({ ...home, id: copy.id, pass: "copy" }, Promise.resolve(new Map([[copy.id, copy]])), signal);
    await restoreHome({ ...home, id: input.id, pass: "final" }, described, signal);
  } catch (error) {
    // Applied again, it could fail again (some changes tar cannot apply): the next final is taken whole.
    if (input.copy && (await holdsChanges().catch(() => false))) {
      await refuseChanges(input.copy).catch((noted: Error) => console.error(`[moves] noting a failed final pass of ${input.username} in the move's repository failed: ${noted.message}`));
    }
    throw error;
  }
}

/**
 * The target's side of a pass: the account's databases made afresh on this machine's MariaDB
 * (its users with the source's password hashes, their grants), the site folders of the home
 * written by the account's own user as the pass's archive has them (./move-archive.ts), each dump
 * loaded by a user of its database only. Every name comes from the panel's job — `databases` and
 * `database_users` are the account's own, from the panel's records — never from the source's
 * answer: a hash is taken for a user the job names, a dump for a database it names, and each
 * snapshot is read from the repository itself. Run again, it gives the same result: the target
 * is a copy until the switch. The final pass's archive holds only what changed since the copy
 * (`copy`, its home snapshot): when this node has begun to apply one before, the copy is written
 * back whole first (into its folders emptied), and the new archive applied onto it. When that
 * fails, the node says so in the move's repository and the source takes the next final whole,
 * which is written as a copy is (./move-archive.ts).
 */
export async function restoreMoveSnapshot(
  input: {
    move: MoveRepository;
    pass: MovePass;
    username: string;
    snapshots: MoveSnapshots;
    copy: string | null;
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
  await pruneOldMoveFiles();
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
    const dumps = input.databases.flatMap((database) => snapshots.dumps.find((dump) => dump.database === database) ?? []);
    // One listing of the pass's snapshots, asked while the home's archive starts to come; the
    // home and each database are written side by side (each restic run's start costs about half a second).
    const described = snapshotsById([...(snapshots.home ? [snapshots.home] : []), ...dumps.map((dump) => dump.snapshot)]);
    described.catch(() => undefined); // each part awaits it, and fails with it
    const home = { username: input.username, folders: input.folders };
    const writeHome = async () => {
      if (!snapshots.home) return;
      if (input.pass === "final") await restoreFinalHome({ ...home, id: snapshots.home, copy: input.copy, repository: input.move.repository }, described, signal);
      else await restoreHome({ ...home, id: snapshots.home, pass: "copy" }, described, signal);
    };
    const loadDump = async (dump: { database: string; snapshot: string }) => {
      const snapshot = await partOfPass(described, dump.snapshot, `db:${dump.database}`, input.pass);
      await restoreDump({ snapshot, database: dump.database, into: dump.database }, signal);
    };
    await allEnded([writeHome(), ...dumps.map(loadDump)]);
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
  await forgetMoveFiles(repository);
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
