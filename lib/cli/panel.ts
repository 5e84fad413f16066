import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { z } from "zod";
import {
  type Connection,
  configuredTarget,
  DataDirLockedError,
  type Database,
  NoPanelDatabaseError,
  openExistingConnection,
} from "@/db/client";
import { prepareDatabase } from "@/db/prepare";
import { suspendAccount, terminateAccount, unsuspendAccount } from "@/lib/accounts/lifecycle";
import { ADMIN } from "@/lib/accounts/manager";
import { listUsernameRuns, restoreTerminatedAccount } from "@/lib/backups/restore-account";
import { restoreAccountBodySchema, restoreBodySchema } from "@/lib/backups/schemas";
import { restoreManagedAccount } from "@/lib/backups/restores";
import { backupAccount, backupAllAccounts, listAccountRuns, withBackupLease } from "@/lib/backups/service";
import { createAccount, findAccountIdByUsername, listManagedAccounts } from "@/lib/accounts/service";
import { createAdminUser, findAdminByEmail, listAdminUsers, setAdminEnabled, setAdminPassword } from "@/lib/admins/service";
import { resetTwoFactor } from "@/lib/admins/two-factor";
import { createApiKey, deleteApiKey, getApiKey, listApiKeys, setApiKeyEnabled } from "@/lib/api-keys/service";
import type { Actor } from "@/lib/audit/service";
import { closeNewFiles } from "@/lib/data-dir";
import { ConfigError, env } from "@/lib/env";
import { type EnvFile, loadEnvFile } from "@/lib/env-file";
import { AppError, notFound } from "@/lib/errors";
import { bodyOf, isAccepted } from "@/lib/http/accepted";
import { latestMoves } from "@/lib/moves/records";
import { drainNodeSchema, type MoveRecord, startMoveSchema } from "@/lib/moves/schemas";
import { cancelMove, drainNode, nodeMoves, startMove } from "@/lib/moves/service";
import { closePanelBus } from "@/lib/nodes/bus";
import { createNodeSchema } from "@/lib/nodes/schemas";
import { createNode, deleteNode, findNodeByName, joinCommand, listNodes } from "@/lib/nodes/service";
import { addPhpVersion, listPhpVersions } from "@/lib/php/service";
import { createPlan } from "@/lib/plans/service";
import { createReseller, findResellerByUsername } from "@/lib/resellers/service";

// `npm run panel -- <resource> <action> [options]` on the panel's machine (lib/cli/main.ts): what
// an operator scripts, on the same services as the web UI and the API. With --json each command prints exactly one JSON object
// on one line; errors go to stderr with exit code 1 (2 for usage and configuration). It reads
// the server's configuration (panel.env, lib/env-file.ts) and opens only an existing panel
// database: a wrong or missing setting must not start a second, empty panel.

const USAGE = `Usage: npm run panel -- <command> [--json]

  admin create --email E --password P [--name N]
  admin list
  admin disable ID | admin enable ID
  admin password --email E --password P   (ends that admin's sessions)
  admin 2fa reset ID                      (two-factor sign-in off, for a lost device; ends their sessions)
  plan create --name N [--max-databases N] [--max-domains N] [--max-db-users N]
              [--max-dns-records N] [--disk-mb N] [--mailboxes N] [--mail-quota-mb N]
              [--mail-per-hour N] [--mail-per-day N]
  reseller create --username U
  account create --username U --domain D [--plan NAME] [--reseller U] [--email E]
  account list
  account suspend USER [--reason R] | account unsuspend USER
  account delete USER     (terminate: everything of the account on the servers, then its records)
  key create --name N (--admin [--owner EMAIL] | --reseller U | --account U)
             [--ip ADDR_OR_CIDR]... [--endpoint "METHOD /api/path/{param}"]... [--disabled]
             (an admin key belongs to the admin --owner names, else to the first admin: it works
             while they are enabled, goes with them, and SSO signs in as them; made before any
             admin exists, it belongs to none and SSO refuses it)
  key list
  key disable ID | key enable ID | key delete ID
  php add --version 8.3
  php list
  node add NAME --ipv4 ADDR [--ssh-host HOST]
                          (prints the one-time command that enrols the machine, 15 minutes)
  node list
  node remove NAME        (revoke: the node's credentials stop connecting; only without accounts)
  node drain NAME --to NODE [--no-wait]
                          (no new accounts; every account moved to NODE, one after another;
                          follows them until all have ended, exit 1 if one was cancelled)
  node moves NAME         (the moves off the node: not ended, or ended in the last day)
  account move USER --to NODE [--wait] | account move USER --cancel
                          (--wait follows it until it ends, exit 1 if cancelled)
                          (moves run in the panel's server, which must be running: following
                          reads the database every 2 s, PostgreSQL only; Ctrl-C stops following,
                          not the moves. docs/nodes.md "Moving accounts")
  (on a node: node join --panel URL --token TOKEN --nats URL [--ca FILE] [--fingerprint SHA256] [--insecure], node agent)
  backup run [USER]       (every account without USER; failures listed, exit 1)
  backup list USER [--node NAME]
  backup restore USER SNAPSHOT [--database NAME [--into NAME] | --path PATH [--to PATH] | --node NAME]
                          (neither: public_html and every database of that restore point;
                          a terminated USER: the whole account made again)`;

const actor: Actor = { type: "cli" };

class UsageError extends Error {}

type Options = Record<string, string | string[] | boolean | undefined>;

const optionSpec = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  email: { type: "string" },
  password: { type: "string" },
  name: { type: "string" },
  username: { type: "string" },
  domain: { type: "string" },
  plan: { type: "string" },
  reseller: { type: "string" },
  account: { type: "string" },
  admin: { type: "boolean" },
  owner: { type: "string" },
  ip: { type: "string", multiple: true },
  endpoint: { type: "string", multiple: true },
  disabled: { type: "boolean" },
  version: { type: "string" },
  reason: { type: "string" },
  "max-databases": { type: "string" },
  "max-domains": { type: "string" },
  "max-db-users": { type: "string" },
  "max-dns-records": { type: "string" },
  "disk-mb": { type: "string" },
  mailboxes: { type: "string" },
  "mail-quota-mb": { type: "string" },
  "mail-per-hour": { type: "string" },
  "mail-per-day": { type: "string" },
  database: { type: "string" },
  into: { type: "string" },
  path: { type: "string" },
  to: { type: "string" },
  ipv4: { type: "string" },
  "ssh-host": { type: "string" },
  node: { type: "string" },
  cancel: { type: "boolean" },
  wait: { type: "boolean" },
  "no-wait": { type: "boolean" },
} as const;

function required(options: Options, name: string): string {
  const value = options[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

function optionalInt(options: Options, name: string): number | null {
  const value = options[name];
  if (value === undefined) return null;
  if (typeof value !== "string" || !/^[0-9]+$/.test(value)) {
    throw new UsageError(`--${name} must be a whole number`);
  }
  return Number(value);
}

function idArgument(args: string[], what = "key"): number {
  const id = args[0];
  if (!id || !/^[1-9][0-9]*$/.test(id)) throw new UsageError(`give the ${what}'s numeric ID`);
  return Number(id);
}

async function accountArgument(db: Database, args: string[]): Promise<number> {
  const username = args[0];
  if (!username) throw new UsageError("give the account's username");
  const id = await findAccountIdByUsername(db, username);
  if (!id) throw new AppError("NOT_FOUND", `No hosting account named ${username}`);
  return id;
}

async function nodeArgument(db: Database, args: string[]) {
  const name = args[0];
  if (!name) throw new UsageError("give the node's name");
  const node = await findNodeByName(db, name);
  if (!node) throw new AppError("NOT_FOUND", `No node named ${name}`);
  return node;
}

/** One move as `node moves` and `node drain` list it. */
const moveLine = (move: MoveRecord & { account: string }) =>
  `${move.id}\t${move.account}\t${move.source} → ${move.target}\t${move.step}${move.error ? `\t${move.error}` : ""}`;

/** What a command prints at its end; `failure` (on stderr, exit 1) when what it followed did not go as asked. */
interface Outcome {
  json: object;
  text: string;
  failure?: string;
}

/**
 * How a command runs: `say` prints a line of progress (nothing with --json, whose one object
 * comes at the end), `backend` is the panel database's kind.
 */
interface CommandContext {
  say(line: string): void;
  backend: Connection["kind"];
}

type Command = (db: Database, options: Options, args: string[], context: CommandContext) => Promise<Outcome>;

/** How often a followed move is read again. */
const FOLLOW_EVERY_MS = 2_000;

type FollowedMove = MoveRecord & { account: string };

const hasEnded = (move: MoveRecord) => move.state === "done" || move.state === "cancelled";

/**
 * Why moves cannot be followed from here, or null. The panel's server moves the accounts; with
 * PGlite it cannot run while this command holds the data dir, so following would wait forever.
 */
function cannotFollow(context: CommandContext): string | null {
  return context.backend === "pglite"
    ? "Following a move needs PostgreSQL: with PGlite the panel's server, which runs the moves, cannot open the database while this command does"
    : null;
}

/**
 * Reads the moves `ids` every FOLLOW_EVERY_MS (`read` answers those still listed) and says each
 * change of step or error, until every one has ended. Each as last seen, with the last error it
 * had (the driver clears it when the move ends: a move cancelled after failed attempts says why
 * only before). A move no longer listed (its account gone) counts as ended.
 */
async function followMoves(ids: number[], read: () => Promise<FollowedMove[]>, first: FollowedMove[], say: (line: string) => void) {
  const last = new Map(first.filter((move) => ids.includes(move.id)).map((move) => [move.id, move]));
  const reasons = new Map(first.map((move) => [move.id, move.error]));
  const seen = (move: FollowedMove) => `${move.step}\n${move.error ?? ""}`;
  let open = ids.filter((id) => last.has(id) && !hasEnded(last.get(id)!));
  while (open.length) {
    await sleep(FOLLOW_EVERY_MS);
    const now = new Map((await read()).map((move) => [move.id, move]));
    for (const id of open) {
      const move = now.get(id);
      if (!move) continue;
      if (seen(last.get(id)!) !== seen(move)) say(moveLine(move));
      last.set(id, move);
      if (move.error) reasons.set(id, move.error);
    }
    open = open.filter((id) => now.has(id) && !hasEnded(now.get(id)!));
  }
  return ids.flatMap((id) => (last.has(id) ? [{ move: last.get(id)!, reason: reasons.get(id) ?? null }] : []));
}

const commands: Record<string, Command> = {
  async "admin create"(db, options) {
    const admin = await createAdminUser(
      db,
      { email: required(options, "email"), password: required(options, "password"), name: options.name as string | undefined },
      actor,
    );
    return { json: admin, text: `Admin ${admin.email} created (id ${admin.id}).` };
  },

  async "admin list"(db) {
    const admins = await listAdminUsers(db);
    const text = admins.length
      ? admins.map((admin) => `${admin.id}\t${admin.email}\t${admin.is_enabled ? "enabled" : "disabled"}\t${admin.name}`).join("\n")
      : "No admins.";
    return { json: { admins }, text };
  },

  async "admin disable"(db, _options, args) {
    const admin = await setAdminEnabled(db, idArgument(args, "admin"), false, actor);
    return { json: admin, text: `Admin ${admin.id} (${admin.email}) disabled; their sessions have ended.` };
  },

  async "admin enable"(db, _options, args) {
    const admin = await setAdminEnabled(db, idArgument(args, "admin"), true, actor);
    return { json: admin, text: `Admin ${admin.id} (${admin.email}) enabled.` };
  },

  async "admin 2fa"(db, _options, args) {
    const [step, ...rest] = args;
    if (step !== "reset") throw new UsageError("usage: admin 2fa reset ID");
    const admin = await resetTwoFactor(db, idArgument(rest, "admin"), actor);
    return { json: admin, text: `Two-factor sign-in of admin ${admin.id} (${admin.email}) reset; their sessions have ended.` };
  },

  async "admin password"(db, options) {
    const found = await findAdminByEmail(db, required(options, "email"));
    if (!found) throw notFound("Admin");
    const admin = await setAdminPassword(db, found.id, { password: required(options, "password") }, actor);
    return { json: admin, text: `Password of admin ${admin.email} changed; their sessions have ended.` };
  },

  async "plan create"(db, options) {
    const plan = await createPlan(
      db,
      {
        name: required(options, "name"),
        max_databases: optionalInt(options, "max-databases"),
        max_domains: optionalInt(options, "max-domains"),
        max_database_users: optionalInt(options, "max-db-users"),
        max_dns_records: optionalInt(options, "max-dns-records"),
        disk_mb: optionalInt(options, "disk-mb"),
        mailboxes: optionalInt(options, "mailboxes"),
        mail_quota_mb: optionalInt(options, "mail-quota-mb"),
        mail_per_hour: optionalInt(options, "mail-per-hour"),
        mail_per_day: optionalInt(options, "mail-per-day"),
      },
      actor,
    );
    return { json: plan, text: `Plan ${plan.name} created (id ${plan.id}).` };
  },

  async "reseller create"(db, options) {
    const reseller = await createReseller(db, { username: required(options, "username") }, actor);
    return { json: reseller, text: `Reseller ${reseller.username} created (id ${reseller.id}).` };
  },

  async "account create"(db, options) {
    const account = await createAccount(
      db,
      {
        username: required(options, "username"),
        domain: required(options, "domain"),
        plan: options.plan as string | undefined,
        reseller: options.reseller as string | undefined,
        email: options.email as string | undefined,
      },
      actor,
    );
    return {
      json: account,
      text: `Account ${account.username} created (id ${account.id}) with domain ${account.domain}.`,
    };
  },

  async "account list"(db) {
    const accounts = await listManagedAccounts(db, ADMIN, {});
    const text = accounts.length
      ? accounts
          .map((account) => `${account.id}\t${account.username}\t${account.domain}\t${account.plan.name}\t${account.status}`)
          .join("\n")
      : "No hosting accounts.";
    return { json: { accounts }, text };
  },

  async "account suspend"(db, options, args) {
    const outcome = await suspendAccount(db, ADMIN, await accountArgument(db, args), options.reason as string | undefined, actor);
    const account = bodyOf(outcome);
    return { json: account, text: isAccepted(outcome) ? `Account ${account.username} suspended; its node ${account.node} will apply it when it is back.` : `Account ${account.username} suspended.` };
  },

  async "account unsuspend"(db, _options, args) {
    const outcome = await unsuspendAccount(db, ADMIN, await accountArgument(db, args), actor);
    const account = bodyOf(outcome);
    return { json: account, text: isAccepted(outcome) ? `Account ${account.username} unsuspended; its node ${account.node} will apply it when it is back.` : `Account ${account.username} unsuspended.` };
  },

  async "account delete"(db, _options, args) {
    const id = await accountArgument(db, args);
    const outcome = await terminateAccount(db, ADMIN, id, actor);
    const { message } = bodyOf(outcome);
    return { json: { id, username: args[0].trim().toLowerCase(), deleted: !isAccepted(outcome) }, text: `${message}.` };
  },

  async "key create"(db, options) {
    const scopes = [options.admin && "admin", options.reseller && "reseller", options.account && "account"].filter(Boolean);
    if (scopes.length !== 1) throw new UsageError("give exactly one of --admin, --reseller U, --account U");
    let target: { scope: "admin" | "reseller" | "account"; reseller_id?: number; account_id?: number };
    if (options.reseller) {
      const reseller = await findResellerByUsername(db, options.reseller as string);
      if (!reseller) throw new AppError("NOT_FOUND", `No reseller named ${options.reseller}`);
      target = { scope: "reseller", reseller_id: reseller.id };
    } else if (options.account) {
      const accountId = await findAccountIdByUsername(db, options.account as string);
      if (!accountId) throw new AppError("NOT_FOUND", `No hosting account named ${options.account}`);
      target = { scope: "account", account_id: accountId };
    } else {
      target = { scope: "admin" };
    }
    // An admin key belongs to an admin (SSO signs in as them; it goes with them): the one named
    // with --owner, else the first admin (DESIGN.md), recorded now — it never passes to another.
    let ownerAdminId: number | null = null;
    if (options.owner !== undefined) {
      if (target.scope !== "admin") throw new UsageError("--owner is for --admin keys");
      const owner = await findAdminByEmail(db, required(options, "owner"));
      if (!owner) throw new AppError("NOT_FOUND", `No admin with the email ${options.owner}`);
      ownerAdminId = owner.id;
    } else if (target.scope === "admin") {
      ownerAdminId = (await listAdminUsers(db))[0]?.id ?? null;
    }
    const endpoints = (options.endpoint as string[] | undefined) ?? [];
    const created = await createApiKey(
      db,
      {
        name: required(options, "name"),
        ...target,
        is_enabled: !options.disabled,
        allowed_ips: (options.ip as string[] | undefined) ?? [],
        allow_all_endpoints: endpoints.length === 0,
        allowed_endpoints: endpoints,
      },
      actor,
      { ownerAdminId },
    );
    return {
      json: created,
      text: [
        `API key ${created.name} created (id ${created.id}).`,
        `  X-API-Key:    ${created.key}`,
        `  X-API-Secret: ${created.secret}`,
        "Store the secret now: it is shown only this once.",
      ].join("\n"),
    };
  },

  async "key list"(db) {
    const { rows } = await listApiKeys(db, { per_page: 0 });
    const text = rows.length
      ? rows
          .map(
            (key) =>
              `${key.id}\t${key.name}\t${key.key}\t${key.scope}\t${key.is_enabled ? "enabled" : "disabled"}\t` +
              `last used ${key.last_used_at ?? "never"}`,
          )
          .join("\n")
      : "No API keys.";
    return { json: { keys: rows }, text };
  },

  async "key disable"(db, _options, args) {
    const key = await setApiKeyEnabled(db, idArgument(args), false, actor);
    return { json: key, text: `API key ${key.id} (${key.name}) disabled.` };
  },

  async "key enable"(db, _options, args) {
    const key = await setApiKeyEnabled(db, idArgument(args), true, actor);
    return { json: key, text: `API key ${key.id} (${key.name}) enabled.` };
  },

  async "key delete"(db, _options, args) {
    const id = idArgument(args);
    const key = await getApiKey(db, id);
    await deleteApiKey(db, id, actor);
    return { json: { id, deleted: true }, text: `API key ${id} (${key.name}) deleted.` };
  },

  async "php add"(db, options) {
    const php = await addPhpVersion(db, { version: required(options, "version") }, actor);
    return { json: php, text: `PHP ${php.version} added (id ${php.id}).` };
  },

  async "backup run"(db, _options, args) {
    const username = args[0];
    const accountId = username ? await accountArgument(db, args) : null;
    const outcome = await withBackupLease(db, async () => (accountId ? { run: await backupAccount(db, accountId) } : { failures: await backupAllAccounts(db) }));
    if (!outcome) throw new AppError("CONFLICT", "Another backup run is using the repository (the nightly job?); try again when it has ended");
    const { result } = outcome;
    const { run, failures } = result;
    if (run) {
      return { json: run, text: `Backed up ${username}: restore point ${run.id}${run.databases.length ? ` (databases ${run.databases.join(", ")})` : ""}.` };
    }
    const failed = Object.entries(failures!);
    if (failed.length) throw new AppError("VALIDATION", `Backups failed: ${failed.map(([name, error]) => `${name}: ${error}`).join("; ")}`);
    return { json: { failures }, text: "Every account backed up." };
  },

  async "backup list"(db, options, args) {
    const username = args[0];
    if (!username) throw new UsageError("give the account's username");
    // A terminated account's username: its restore points are still listed (and restorable), from
    // the repository of the node that made them (--node, local when left out).
    const id = await findAccountIdByUsername(db, username);
    const { snapshots } = id ? await listAccountRuns(db, ADMIN, id) : await listUsernameRuns(db, username, options.node as string | undefined);
    const text = snapshots.length ? snapshots.map((run) => `${run.id}	${run.time}	${run.databases.join(",")}`).join("\n") : "No backups.";
    return { json: { snapshots }, text };
  },

  async "backup restore"(db, options, args) {
    const [username, snapshot] = args;
    if (!username) throw new UsageError("give the account's username");
    if (!snapshot) throw new UsageError("give the restore point (SNAPSHOT, from backup list)");
    const id = await findAccountIdByUsername(db, username);
    if (!id) {
      // No account of that name: the whole account is made again from the restore point.
      if (options.database || options.path) throw new UsageError(`${username} has no account: restore it whole first (without --database or --path)`);
      const account = await restoreTerminatedAccount(db, actor, restoreAccountBodySchema.parse({ username, snapshot, node: options.node }));
      return { json: account, text: `${account.message} (account id ${account.id}).` };
    }
    const input = restoreBodySchema.parse({ snapshot, database: options.database, into: options.into, path: options.path, to: options.to });
    const result = await restoreManagedAccount(db, ADMIN, id, input);
    return { json: result, text: `${result.message}.` };
  },

  async "node add"(db, options, args) {
    const node = await createNode(db, createNodeSchema.parse({ name: args[0], ipv4: required(options, "ipv4"), ssh_host: options["ssh-host"] }), actor);
    const nats = env().nats;
    return {
      json: node,
      text: [
        `Node ${node.name} added (id ${node.id}). On that machine, as root, within 15 minutes (until ${node.enrolment_expires_at}):`,
        `  ${joinCommand(node.enrolment_token)}`,
        "(the NATS URL as that machine reaches the server)" +
          (nats?.caFile ? `, with ${nats.caFile} (NATS_CA_FILE) copied to that machine as its --ca file` : "") +
          ", then start its agent: npm run panel -- node agent",
      ].join("\n"),
    };
  },

  async "node list"(db) {
    const { nodes } = await listNodes(db);
    const text = nodes
      .map((node) => `${node.id}\t${node.name}\t${node.ipv4 ?? "-"}\t${node.state}\t${node.accounts} account(s)\tlast heartbeat ${node.last_heartbeat_at ?? "never"}`)
      .join("\n");
    return { json: { nodes }, text };
  },

  async "node remove"(db, _options, args) {
    const node = await nodeArgument(db, args);
    const { message } = await deleteNode(db, node.id, actor);
    return { json: { id: node.id, name: node.name, deleted: true }, text: `${message}.` };
  },

  async "node drain"(db, options, args, context) {
    const node = await nodeArgument(db, args);
    const input = drainNodeSchema.parse({ to: required(options, "to") });
    // With PGlite the drain is recorded and the command returns: the server moves the accounts once it runs.
    const unfollowable = options["no-wait"] ? null : cannotFollow(context);
    const drain = await drainNode(db, node.id, input, actor);
    const open = drain.moves.filter((move) => !hasEnded(move));
    const queued = [
      `${drain.node} is draining: ${open.length} account(s) move to ${drain.to}, one after another, as the panel's server runs them.`,
      ...open.map(moveLine),
    ];
    if (options["no-wait"] || unfollowable || open.length === 0) {
      const follow = unfollowable ? `${unfollowable}: follow them on the Nodes page or with \`panel node moves ${drain.node}\` once it has stopped.` : `Follow them with \`panel node moves ${drain.node}\` or on the Nodes page.`;
      return { json: drain, text: [...queued, follow].join("\n") };
    }
    context.say([...queued, "Following them (Ctrl-C stops following, not the moves):"].join("\n"));
    const ids = open.map((move) => move.id);
    const ended = await followMoves(ids, () => nodeMoves(db, node.id), open, context.say);
    const cancelled = ended.filter(({ move }) => move.state === "cancelled");
    const moves = await nodeMoves(db, node.id);
    return {
      json: { ...drain, moves },
      text: `The ${ended.length} move(s) off ${drain.node} have ended: ${ended.length - cancelled.length} done, ${cancelled.length} cancelled.`,
      failure: cancelled.length ? `Cancelled: ${cancelled.map(({ move, reason }) => `${move.account}${reason ? ` (${reason})` : ""}`).join(", ")}` : undefined,
    };
  },

  async "node moves"(db, _options, args) {
    const node = await nodeArgument(db, args);
    const moves = await nodeMoves(db, node.id);
    return { json: { moves }, text: moves.length ? moves.map(moveLine).join("\n") : `No moves off ${node.name} in the last day.` };
  },

  async "account move"(db, options, args, context) {
    const accountId = await accountArgument(db, args);
    const username = args[0].trim().toLowerCase();
    if (options.cancel) {
      if (options.to || options.wait) throw new UsageError("--cancel takes neither --to nor --wait");
      const { move } = await cancelMove(db, accountId, actor);
      return { json: { move }, text: `The move of ${username} to ${move.target} is ${move.step}: the source keeps serving.` };
    }
    const input = startMoveSchema.parse({ node: required(options, "to") });
    // Refused before the move is queued: --wait asks for what this database cannot give.
    const unfollowable = options.wait ? cannotFollow(context) : null;
    if (unfollowable) throw new ConfigError(`${unfollowable}; move without --wait and follow it on the account's page`);
    const { move } = await startMove(db, accountId, input, actor);
    const queued = `${username} moves from ${move.source} to ${move.target} (move ${move.id}, ${move.step}); the panel's server runs it`;
    if (!options.wait) return { json: { move }, text: `${queued}: follow it with \`panel node moves ${move.source}\` or on the account's page.` };
    context.say(`${queued}. Following it (Ctrl-C stops following, not the move):`);
    const read = async () => {
      const latest = (await latestMoves(db, [accountId])).get(accountId);
      return latest?.id === move.id ? [{ ...latest, account: username }] : [];
    };
    const [{ move: ended, reason }] = await followMoves([move.id], read, [{ ...move, account: username }], context.say);
    const { account: _, ...last } = ended;
    return {
      json: { move: last },
      text: last.state === "done" ? `${username} is on ${last.target} now.` : `The move of ${username} ended ${last.step}; it stays on ${last.source}.`,
      failure: last.state === "cancelled" ? `The move of ${username} to ${last.target} was cancelled${reason ? `: ${reason}` : ""}` : undefined,
    };
  },

  async "php list"(db) {
    const versions = await listPhpVersions(db);
    const text = versions.length ? versions.map((v) => `${v.id}\t${v.version}\t${v.installed ? "installed" : "not installed"}`).join("\n") : "No PHP versions.";
    return { json: { php_versions: versions }, text };
  },
};

function noDatabaseMessage(error: NoPanelDatabaseError, envFile: EnvFile | undefined): string {
  const file = envFile ? `${envFile.path}${envFile.found ? "" : " (absent)"}` : "panel.env";
  return (
    `${error.message}; start the panel once (npm start creates it and, on a fresh install, prints a link ` +
    `that sets up the first admin) or set DATABASE_URL (or DATA_DIR) to the server's, in ${file}.`
  );
}

function describeError(error: unknown): string {
  if (error instanceof AppError) {
    const fields = Object.entries(error.fieldErrors ?? {}).map(([field, messages]) => `  ${field}: ${messages.join("; ")}`);
    return [error.message, ...fields].join("\n");
  }
  if (error instanceof z.ZodError) {
    return ["Invalid input:", ...error.issues.map((issue) => `  ${issue.path.join(".") || "input"}: ${issue.message}`)].join("\n");
  }
  return error instanceof Error ? error.message : String(error);
}

export async function runCli(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: optionSpec, allowPositionals: true, strict: true });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values: options, positionals } = parsed;
  const [resource, action, ...args] = positionals;
  const command = commands[`${resource} ${action}`];
  if (options.help || !command) {
    (options.help ? console.log : console.error)(USAGE);
    return options.help ? 0 : 2;
  }

  let connection: Connection | undefined;
  let envFile: EnvFile | undefined;
  try {
    // As the server does: what the command line makes (zone files, sites, the lock) is the panel's alone.
    closeNewFiles();
    envFile = loadEnvFile();
    connection = await openExistingConnection(configuredTarget());
    await prepareDatabase(connection);
    const say = options.json ? () => undefined : (line: string) => console.log(line);
    const result = await command(connection.db, options, args, { say, backend: connection.kind });
    console.log(options.json ? JSON.stringify(result.json) : result.text);
    if (result.failure) {
      console.error(`Error: ${result.failure}`);
      return 1;
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof NoPanelDatabaseError) {
      console.error(noDatabaseMessage(error, envFile));
      return 2;
    }
    if (error instanceof ConfigError || error instanceof DataDirLockedError) {
      console.error(error.message);
      return 2;
    }
    console.error(`Error: ${describeError(error)}`);
    return 1;
  } finally {
    await closePanelBus();
    await connection?.close();
  }
}
