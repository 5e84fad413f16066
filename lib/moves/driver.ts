import { randomUUID } from "node:crypto";
import { and, asc, eq, inArray, isNull, lt, or, sql } from "drizzle-orm";
import type { Database, Queryable } from "@/db/client";
import { accountMoves, customerDatabases, databaseGrants, databaseUsers, domainCertificates, domains, hostingAccounts, mailboxes, mailDomains, nodes } from "@/db/schema";
import { removeAccountFrom } from "@/lib/accounts/lifecycle";
import type { OperationName } from "@/lib/agent/operations";
import { recordAudit } from "@/lib/audit/service";
import { moveKeysOf, publishMoveDkimKeys, signWithMoveKeys, unpublishMoveDkimKeys } from "@/lib/email/dkim";
import { mailHostOf } from "@/lib/provisioning/rules";
import { mailboxNamesOf } from "@/lib/email/service";
import { MAIL_FOLDER } from "@/lib/provisioning/mail";
import { moveAccountRecords } from "@/lib/dns/zone";
import { syncZoneFile } from "@/lib/dns/zone-file-sync";
import { AppError } from "@/lib/errors";
import { duringFinalPass, hostedAccounts, knownPhpVersions } from "@/lib/hosting/service";
import { nodeTakesJobs, publishQueuedJobs, queueOnNode } from "@/lib/nodes/dispatch";
import { type Host, hostOfNode, type NodeRow } from "@/lib/nodes/hosts";
import { accountState, queueAccountReconcile } from "@/lib/nodes/reconcile";
import { nodeAddress } from "@/lib/nodes/service";
import { siteFolders } from "@/lib/provisioning/home-layout";
import type { MoveRepository, MoveSnapshots } from "@/lib/provisioning/move-runs";
import { forwardUntil, giveBackTtls, syncZones } from "./dns";
import { OPEN_STATES, type MoveRow, stepEnded, stepRuns, stepStarted } from "./records";

// What moves an account (docs/nodes.md "Moving accounts"): each open move of account_moves is
// taken one step at a time, the step's work done on the nodes as jobs on their queues, and the
// next state written only when the step is done. Every step may run again from its start — the
// panel, an agent or NATS may stop in the middle of it — and gives the same result; a step that
// fails is tried again (its error on the move), and a move that fails MAX_ATTEMPTS times before
// its switch is cancelled. One panel instance drives a move at a time (a lease on its row), and
// the moves of one source node go one after another (a drain).

/** How often the open moves are looked at. */
const TICK_MS = 2_000;
/** A driver's hold on a move, renewed while it works on it; another instance takes it after. */
const LEASE_S = 45;
const LEASE_RENEW_MS = 15_000;
/** Failed attempts of a step before the switch, after which the move is cancelled. */
export const MAX_ATTEMPTS = 5;
/** How long one pass (a snapshot, a restore) may run on a node. */
const PASS_DEADLINE_MS = 6 * 60 * 60_000;

const globalForDriver = globalThis as unknown as { __panelMoveDriver?: { holder: string; timer?: NodeJS.Timeout } };

/** Starts this process's driver (server.ts): open moves go on from where they were. */
export function startMoveDriver(db: Database): void {
  if (globalForDriver.__panelMoveDriver) return;
  const driver: { holder: string; timer?: NodeJS.Timeout } = { holder: randomUUID() };
  globalForDriver.__panelMoveDriver = driver;
  const tick = async () => {
    await advanceMoves(db, driver.holder).catch((error) => console.error("[moves] driving the moves:", (error as Error).message));
    driver.timer = setTimeout(tick, TICK_MS);
    driver.timer.unref();
  };
  driver.timer = setTimeout(tick, TICK_MS);
  driver.timer.unref();
}

/**
 * Stops this process's driver (the server's shutdown) and gives up its leases: another instance,
 * or this one restarted, goes on with its moves at once instead of when the leases run out.
 */
export async function stopMoveDriver(db: Database): Promise<void> {
  const driver = globalForDriver.__panelMoveDriver;
  if (!driver) return;
  clearTimeout(driver.timer);
  globalForDriver.__panelMoveDriver = undefined;
  await db.update(accountMoves).set({ leaseHolder: null, leaseExpiresAt: null }).where(eq(accountMoves.leaseHolder, driver.holder));
}

/** One step of each open move whose turn it is. */
export async function advanceMoves(db: Database, holder: string): Promise<void> {
  const open = await db.select().from(accountMoves).where(inArray(accountMoves.state, [...OPEN_STATES])).orderBy(asc(accountMoves.id));
  // A move that only forwards (the source's forward waiting for its end) keeps no one waiting.
  const started = new Set(open.filter((move) => move.state !== "queued" && move.state !== "forwarding").map((move) => move.sourceNodeId));
  for (const move of open) {
    if (move.state === "queued") {
      // A drain: the next account of a node leaves once the one before it has.
      if (started.has(move.sourceNodeId)) continue;
      started.add(move.sourceNodeId);
    }
    await advanceMove(db, move.id, holder);
  }
}

/** Takes (or renews) the move's lease for `holder`; false while another instance holds it. */
async function takeLease(db: Queryable, id: number, holder: string): Promise<boolean> {
  const taken = await db
    .update(accountMoves)
    .set({ leaseHolder: holder, leaseExpiresAt: sql`now() + make_interval(secs => ${LEASE_S})` })
    .where(and(eq(accountMoves.id, id), or(isNull(accountMoves.leaseExpiresAt), lt(accountMoves.leaseExpiresAt, sql`now()`), eq(accountMoves.leaseHolder, holder))))
    .returning({ id: accountMoves.id });
  return taken.length === 1;
}

async function advanceMove(db: Database, id: number, holder: string): Promise<void> {
  if (!(await takeLease(db, id, holder))) return;
  const renew = setInterval(() => void takeLease(db, id, holder).catch(() => undefined), LEASE_RENEW_MS);
  try {
    // Step after step while they succeed: the switch's cleaning follows it at once.
    for (;;) {
      const [move] = await db.select().from(accountMoves).where(eq(accountMoves.id, id));
      if (!move || !OPEN_STATES.includes(move.state) || !(await runStep(db, move))) break;
    }
  } finally {
    clearInterval(renew);
    await db.update(accountMoves).set({ leaseHolder: null, leaseExpiresAt: null }).where(and(eq(accountMoves.id, id), eq(accountMoves.leaseHolder, holder)));
  }
}

/** The move's state becomes `to` if it is still `from` (a cancel may have come meanwhile); whether it did. */
async function advance(db: Queryable, move: MoveRow, to: MoveRow["state"], set: Partial<typeof accountMoves.$inferInsert> = {}): Promise<boolean> {
  const ended = to === "done" || to === "cancelled";
  const now = new Date();
  const changed = await db
    .update(accountMoves)
    .set({ state: to, error: null, attempts: 0, steps: stepEnded(now), ...(ended ? { finishedAt: now, repositoryPassword: null } : {}), ...set })
    .where(and(eq(accountMoves.id, move.id), eq(accountMoves.state, move.state)))
    .returning({ id: accountMoves.id });
  return changed.length === 1;
}

/** Everything a step needs: the two nodes, the account, and the move's repository as a job carries it. */
interface MoveContext {
  db: Database;
  move: MoveRow;
  source: Host;
  target: Host;
  account: { id: number; username: string };
  repository: MoveRepository;
}

/** Which nodes each state's work runs on. */
const NODES_OF_STATE: Record<MoveRow["state"], ("source" | "target")[]> = {
  queued: [],
  preparing: ["target"],
  copying: ["source", "target"],
  switching: ["source", "target"],
  cleaning: ["source", "target"],
  // Its end removes the source's forward, or queues that for a source that does not answer.
  forwarding: [],
  cancelling: ["target"],
  done: [],
  cancelled: [],
};

/** The node's row as it is now (its last heartbeat). */
async function currentNode(db: Database, id: number): Promise<NodeRow> {
  const [row] = await db.select().from(nodes).where(eq(nodes.id, id));
  return row;
}

/**
 * The host of a move's node, whose reachability is judged at each call from the node's current
 * row: a step's earlier calls (a pass over a large home) can outlast the heartbeat limit, and the
 * row read when the step began would then refuse a node that answers all along. The driver calls
 * its nodes outside any transaction, so the read never waits on one.
 */
function liveHost(db: Database, node: NodeRow): Host {
  return hostOfNode(node, undefined, () => currentNode(db, node.id));
}

/**
 * Until when the move's step may not begin: the switch until the caches of the records' old TTL
 * have run out (./dns.ts), the forward's end until its time. GET …/move says so (`waiting`).
 */
function waitsUntil(move: MoveRow): Date | null {
  const until = move.state === "switching" ? move.cachesClearAt : move.state === "forwarding" ? move.forwardUntil : null;
  return until && until.getTime() > Date.now() ? until : null;
}

/**
 * The move ends (done, or cancelled) and, in the same transaction, its records get their TTL back
 * (./dns.ts); `alongside` runs in it too. Whether it ended (a cancel may have come meanwhile).
 */
async function endMove(db: Database, move: MoveRow, to: "done" | "cancelled", set: Partial<typeof accountMoves.$inferInsert> = {}, alongside?: (tx: Queryable) => Promise<void>): Promise<boolean> {
  const zones = await db.transaction(async (tx) => {
    if (!(await advance(tx, move, to, set))) return null;
    await alongside?.(tx);
    return giveBackTtls(tx, move);
  });
  if (zones) await syncZones(db, zones);
  return zones !== null;
}

/** Its first attempt begins the step (docs/nodes.md "Moving accounts": the move's `steps`); a step tried again keeps its start. */
async function beginStep(db: Queryable, move: MoveRow): Promise<void> {
  if (stepRuns(move, move.state)) return;
  await db.update(accountMoves).set({ steps: stepStarted(move.state, new Date()) }).where(and(eq(accountMoves.id, move.id), eq(accountMoves.state, move.state)));
}

/** Runs the step of the move's state; whether it succeeded. */
async function runStep(db: Database, move: MoveRow): Promise<boolean> {
  // Waiting costs no attempt and is no error. The forward's time is its step's: it begins with the
  // wait. The switch begins once the DNS caches are clear: that wait lies between copying's end
  // and switching's start.
  if (move.state === "forwarding") await beginStep(db, move);
  if (waitsUntil(move)) return false;
  const nodeRows = await db.select().from(nodes).where(inArray(nodes.id, [move.sourceNodeId, move.targetNodeId]));
  const nodeOf = (id: number) => nodeRows.find((node) => node.id === id)!;
  const [account] = await db.select({ id: hostingAccounts.id, username: hostingAccounts.username }).from(hostingAccounts).where(eq(hostingAccounts.id, move.accountId));
  const context: MoveContext = {
    db,
    move,
    source: liveHost(db, nodeOf(move.sourceNodeId)),
    target: liveHost(db, nodeOf(move.targetNodeId)),
    account,
    repository: { repository: move.repository, password: move.repositoryPassword ?? "" },
  };
  // A node that does not answer is waited for: the step has not been tried, so it costs no attempt.
  const silent = NODES_OF_STATE[move.state].map((side) => context[side].node).find((node) => !nodeTakesJobs(node));
  if (silent) {
    await db.update(accountMoves).set({ error: `waiting for the node ${silent.name}, which does not answer` }).where(eq(accountMoves.id, move.id));
    return false;
  }
  await beginStep(db, move);
  try {
    await STEPS[move.state](context);
    return true;
  } catch (error) {
    const reason = error instanceof AppError ? error.message : "an unexpected error (see the panel's log)";
    const attempts = move.attempts + 1;
    // In the log too: the move's row keeps only the last attempt's error, and forgets it once the step is done.
    console.error(`[moves] move ${move.id} (${move.state}), attempt ${attempts} failed:`, error instanceof AppError ? error.message : error);
    const givesUp = attempts >= MAX_ATTEMPTS && (move.state === "preparing" || move.state === "copying" || move.state === "switching");
    await db
      .update(accountMoves)
      .set(givesUp ? { state: "cancelling", attempts: 0, error: `cancelled after ${attempts} failed attempts: ${reason}`, steps: stepEnded(new Date()) } : { attempts, error: reason })
      .where(and(eq(accountMoves.id, move.id), eq(accountMoves.state, move.state)));
    return false;
  }
}

/**
 * The account as the database says it is (`as-is`), suspended (the target before the switch), as
 * the source holds it during the final pass (duringFinalPass: its sites may still answer reads),
 * or as the target serves it from the switch on (`switched`: its mail signed with the keys the
 * move made there, which the switch's commit makes the signing ones: lib/email/dkim.ts).
 */
async function stateOf(context: MoveContext, held: "as-is" | "suspended" | "final-pass" | "switched" = "as-is") {
  const state = await accountState(context.db, context.account.id);
  const phpVersions = await knownPhpVersions(context.db);
  const account = held === "suspended" ? { ...state.account, suspended: true } : held === "final-pass" ? duringFinalPass(state.account) : state.account;
  if (held === "switched" && state.mail) {
    const moveKeys = await moveKeysOf(context.db, context.account.id, context.move);
    const kept = (state.mail.dkim ?? []).filter((key) => !moveKeys.some((moved) => moved.domain === key.domain));
    state.mail = { ...state.mail, dkim: [...kept, ...moveKeys.map(({ domain, selector }) => ({ domain, selector }))] };
  }
  return { state: { ...state, account }, phpVersions };
}

/** The account's databases, their users and grants, by the names the servers know. */
async function databasesOf(db: Queryable, accountId: number) {
  const [databases, users, grants] = await Promise.all([
    db.select({ name: customerDatabases.databaseName }).from(customerDatabases).where(eq(customerDatabases.accountId, accountId)),
    db.select({ name: databaseUsers.username }).from(databaseUsers).where(eq(databaseUsers.accountId, accountId)),
    db
      .select({ username: databaseUsers.username, database: customerDatabases.databaseName, privileges: databaseGrants.privileges })
      .from(databaseGrants)
      .innerJoin(databaseUsers, eq(databaseUsers.id, databaseGrants.databaseUserId))
      .innerJoin(customerDatabases, eq(customerDatabases.id, databaseGrants.databaseId))
      .where(eq(databaseUsers.accountId, accountId)),
  ]);
  return { databases: databases.map((row) => row.name), users: users.map((row) => row.name), grants: grants.map((grant) => ({ ...grant, privileges: grant.privileges as string[] })) };
}

const domainsOf = async (db: Queryable, accountId: number) =>
  (await db.select({ domain: domains.domain }).from(domains).where(eq(domains.accountId, accountId)).orderBy(asc(domains.id))).map((row) => row.domain);

/** The account's mail domains' host names, `mail.<domain>`: each has a certificate of its own (lib/autossl/service.ts). */
const mailHostsOf = async (db: Queryable, accountId: number) =>
  (await db.select({ domain: mailDomains.domain }).from(mailDomains).where(eq(mailDomains.accountId, accountId))).map((row) => mailHostOf(row.domain));

/**
 * What the source's forward until `until` is made of (lib/provisioning/forwards.ts): every name
 * the account's sites answer to, from the panel's records, and the target's address as the panel
 * records it; null when there is nothing to forward to, or its time is over.
 */
async function forwardOf(context: MoveContext, until: Date | null) {
  const { db, account } = context;
  const target = nodeAddress(context.target.node);
  if (!target || !until || until.getTime() <= Date.now()) return null;
  const hosted = (await hostedAccounts(db, [account.id])).get(account.id);
  const sites = (hosted?.domains ?? []).map((domain) => ({ domain: domain.domain, server_names: domain.serverNames }));
  return { target, until: until.toISOString(), sites };
}

/** What a pass carries of the home: the site folders, and `mail` (the maildirs) when the account has mailboxes. */
const siteFoldersOf = async (db: Queryable, accountId: number) => {
  const folders = siteFolders((await db.select({ root: domains.domainPath }).from(domains).where(eq(domains.accountId, accountId))).map((row) => row.root));
  const [mailbox] = await db.select({ id: mailboxes.id }).from(mailboxes).where(eq(mailboxes.accountId, accountId)).limit(1);
  return mailbox && !folders.includes(MAIL_FOLDER) ? [...folders, MAIL_FOLDER] : folders;
};

/**
 * One pass: a snapshot on the source, restored on the target. The source's answer reaches the
 * target only as the source's host checked it against what was asked (lib/nodes/answers.ts:
 * snapshot ids of their form, databases and users among the account's own); the target is told
 * the account's names from the panel's records, and takes nothing else from that answer.
 */
async function pass(context: MoveContext, name: "copy" | "final"): Promise<MoveSnapshots> {
  const { db, account, repository } = context;
  const { databases, users, grants } = await databasesOf(db, account.id);
  const long = { deadlineMs: PASS_DEADLINE_MS };
  const folders = await siteFoldersOf(db, account.id);
  // The final pass archives what changed since the copy the target holds: its home snapshot, the first of copySnapshots.
  const copy = name === "final" ? (context.move.copySnapshots?.split(" ")[0] ?? null) : null;
  const snapshots = await context.source.run("move.snapshot", { move: repository, pass: name, username: account.username, folders, copy, databases, database_users: users }, long);
  await context.target.run("move.restore", { move: repository, pass: name, username: account.username, snapshots, copy, folders, databases, database_users: users, grants }, long);
  return snapshots;
}

/** Laps of a step for the log: each named with the seconds it took ("final pass 9.7 s"). */
function stopwatch() {
  const laps: string[] = [];
  let last = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    laps.push(`${name} ${((now - last) / 1000).toFixed(1)} s`);
    last = now;
  };
  return Object.assign(lap, { laps: () => laps.join(", ") });
}

const snapshotIds = (snapshots: MoveSnapshots) => [snapshots.home, ...snapshots.dumps.map((dump) => dump.snapshot)].filter(Boolean).join(" ");

/**
 * A switch that did not commit: the source serves again — once the target, if it may have
 * started serving, is suspended again. A target that does not answer keeps the source suspended
 * (never two nodes serving) until the switch is tried again or the move cancelled.
 */
async function bringSourceBack(context: MoveContext, targetMayServe: boolean): Promise<void> {
  try {
    if (targetMayServe) await context.target.run("account.ensure", await stateOf(context, "suspended"));
    await context.source.run("account.ensure", await stateOf(context));
  } catch (error) {
    console.error(`[moves] move ${context.move.id}: the source could not be brought back yet:`, (error as Error).message);
  }
}

/** Whether the move's source answers now (its current heartbeat). */
const sourceAnswers = async (context: MoveContext) => nodeTakesJobs(await currentNode(context.db, context.move.sourceNodeId));

/**
 * The move's repository goes, removed by the node that wrote it — the source: the target only
 * reads it (restic with --no-lock), so a store where each node may change only what it wrote
 * (docs/nodes.md "Moving accounts") holds. A source that does not answer (a cancel) leaves it to
 * the target, which can remove it where the store lets it.
 */
async function forgetRepository(context: MoveContext): Promise<void> {
  const writer = (await sourceAnswers(context)) ? context.source : context.target;
  await writer.run("move.forget", { move: context.repository });
}

const STEPS: Record<MoveRow["state"], (context: MoveContext) => Promise<void>> = {
  queued: async ({ db, move }) => void (await advance(db, move, "preparing")),

  // The target gets the account — user, home, sites, PHP pools, keys, cron — suspended: its sites
  // answer "suspended" and no one logs in there until the switch.
  // First the target is asked whether any of the account's names is there already without the
  // panel's mark (a service's Linux user, an admin's nginx file, a database the panel did not make,
  // a MariaDB server of another node): then the move is cancelled at once, naming them, and nothing
  // is made there — trying again would find them again.
  preparing: async (context) => {
    const { db, move, account } = context;
    const { databases, users } = await databasesOf(db, account.id);
    const domainNames = (await db.select({ domain: domains.domain }).from(domains).where(eq(domains.accountId, account.id))).map((row) => row.domain);
    try {
      await context.target.run("account.check-names", {
        username: account.username,
        domains: domainNames,
        phpVersions: await knownPhpVersions(db),
        databases,
        databaseUsers: users,
      });
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== "CONFLICT") throw error;
      await db
        .update(accountMoves)
        .set({ state: "cancelling", attempts: 0, error: `cancelled: the target ${context.target.node.name} refused the account: ${error.message}`, steps: stepEnded(new Date()) })
        .where(and(eq(accountMoves.id, move.id), eq(accountMoves.state, "preparing")));
      return;
    }
    await context.target.run("account.ensure", await stateOf(context, "suspended"));
    // DKIM keys of the target's own, published now and signing from the switch (lib/email/dkim.ts).
    await publishMoveDkimKeys(db, account.id, move, context.target);
    await advance(context.db, context.move, "copying");
  },

  // The first pass, while the source serves: what the final one adds is only what changed since.
  copying: async (context) => {
    const snapshots = await pass(context, "copy");
    await advance(context.db, context.move, "switching", { copySnapshots: snapshotIds(snapshots) });
  },

  // The source is held for the final pass (suspended, its sites answering reads only or nothing:
  // MOVE_FINAL_PASS_SITES) and the pass is taken; the source's sites become forwards to the target
  // (still suspended: for the moment it takes to start, a visitor there gets its 503), the target
  // serves, then in one transaction the account's node and its zones' A records become the
  // target's. Until that commits the source holds the truth: any failure (or a cancel meanwhile)
  // suspends the target again and brings the source back. Only one of them serves from its own
  // copy at any moment; a visitor of either address goes without the site only while the target
  // starts (docs/nodes.md "Moving accounts").
  switching: async (context) => {
    const { db, move, account } = context;
    // Where the time of the switch goes (the visitors' gap), for the panel's log.
    const lap = stopwatch();
    await context.source.run("account.ensure", await stateOf(context, "final-pass"));
    lap("source held");
    let zones: number[] | null = null;
    let targetMayServe = false;
    try {
      const snapshots = await pass(context, "final");
      lap("final pass");
      const forward = await forwardOf(context, forwardUntil(move, new Date()));
      if (forward) await context.source.run("forward.apply", forward);
      lap("source forwarding");
      targetMayServe = true;
      await context.target.run("account.ensure", await stateOf(context, "switched"));
      lap("target serving");
      zones = await db.transaction(async (tx) => {
        const switchedAt = new Date();
        const [current] = await tx.select({ state: accountMoves.state }).from(accountMoves).where(eq(accountMoves.id, move.id)).for("update");
        if (current?.state !== "switching") throw new AppError("CONFLICT", "the move was cancelled before its switch");
        await tx.select({ id: hostingAccounts.id }).from(hostingAccounts).where(eq(hostingAccounts.id, account.id)).for("update");
        await tx.update(hostingAccounts).set({ nodeId: move.targetNodeId }).where(eq(hostingAccounts.id, account.id));
        const [from, to] = [nodeAddress(context.source.node), nodeAddress(context.target.node)];
        const changed = from && to && from !== to ? await moveAccountRecords(tx, account.id, from, to) : [];
        // Its certificates stay on the source (their keys never leave a node): AutoSSL's next run
        // issues them on the target, as for sites it has not looked at yet.
        await tx.delete(domainCertificates).where(inArray(domainCertificates.domainId, tx.select({ id: domains.id }).from(domains).where(eq(domains.accountId, account.id))));
        await signWithMoveKeys(tx, account.id, move);
        await advance(tx, move, "cleaning", { switchedAt, forwardUntil: forwardUntil(move, switchedAt), finalSnapshots: snapshotIds(snapshots) });
        await recordAudit(tx, { type: "system" }, {
          action: "hosting_account.move",
          targetType: "hosting_account",
          targetId: account.id,
          details: { move: move.id, from: context.source.node.name, to: context.target.node.name },
        });
        return changed;
      });
    } finally {
      lap(zones === null ? "not committed" : "committed");
      console.log(`[moves] move ${move.id} switch: ${lap.laps()}`);
      if (zones === null) await bringSourceBack(context, targetMayServe);
    }
    for (const domainId of zones) await syncZoneFile(db, domainId);
  },

  // The source's forwards, made in the switch, are written again with the end the commit set (and
  // made, when a panel restarted between the two), the target serves the account as it is (again:
  // a change made during the switch), everything else of the account leaves the source and the
  // move's repository goes. A source reached only after the forward's time (it did not answer)
  // gets no forward: the account leaves it whole.
  cleaning: async (context) => {
    const { db, move, account } = context;
    const forward = await forwardOf(context, move.forwardUntil);
    if (forward) await context.source.run("forward.apply", forward);
    await context.target.run("account.ensure", await stateOf(context));
    // The maildirs came as files: Dovecot's indexes and quota counted again from them.
    await context.target.run("mail.resync", { username: account.username, mailboxes: await mailboxNamesOf(db, account.id) }, { deadlineMs: PASS_DEADLINE_MS });
    await removeAccountFrom(db, context.source, account, { forwarding: forward !== null });
    await forgetRepository(context);
    await advance(db, move, "forwarding");
  },

  // Once the forward's time is over (runStep waits for it) the source's forwards and the
  // certificates they served go, and the move is done. A source that does not answer then gets
  // that as a queued job, carried out when it is back (and its next reconcile drops a forward past
  // its end anyway): the move does not wait for it.
  forwarding: async (context) => {
    const { db, move, account } = context;
    const domains = await domainsOf(db, account.id);
    const removals: { op: OperationName; args: { domains: string[] } }[] = [
      { op: "forward.remove", args: { domains } },
      { op: "certificates.remove", args: { domains: [...domains, ...(await mailHostsOf(db, account.id))] } },
    ];
    const answers = await sourceAnswers(context);
    if (answers) for (const removal of removals) await context.source.run(removal.op, removal.args as never);
    const queue = async (tx: Queryable) => queueOnNode(tx, context.source.node, null, "move.forward-end", "batch", { steps: removals });
    await endMove(db, move, "done", {}, answers ? undefined : queue);
    if (!answers) await publishQueuedJobs(db, move.sourceNodeId);
  },

  // The target's copy and the repository go; the source serves as the database says (it was
  // never changed, or a switch that failed brought it back — made sure of here, queued for it
  // when it does not answer now).
  cancelling: async (context) => {
    const { db, move, account } = context;
    await removeAccountFrom(db, context.target, account);
    await unpublishMoveDkimKeys(db, account.id, move);
    await forgetRepository(context);
    if (await sourceAnswers(context)) await context.source.run("account.ensure", await stateOf(context));
    else await queueAccountReconcile(db, account.id);
    // Why it was cancelled (a refusal, the attempts given up) stays on the move.
    await endMove(db, move, "cancelled", { error: move.error });
  },

  done: async () => undefined,
  cancelled: async () => undefined,
};
