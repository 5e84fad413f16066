import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { isDeepStrictEqual } from "node:util";
import { createUser } from "@nats-io/nkeys";
import { eq, is, sql } from "drizzle-orm";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import type { Database } from "@/db/client";
import * as schema from "@/db/schema";
import { accountMoves, nodeJobs } from "@/db/schema";
import { terminateAccount, suspendAccount, unsuspendAccount } from "@/lib/accounts/lifecycle";
import { ADMIN } from "@/lib/accounts/manager";
import { configurePhpBodySchema, type CreateAccountInput } from "@/lib/accounts/schemas";
import { configurePhp, createAccount, findAccountIdByUsername, getAccount, updateAccountAdminFields, updateAccountProfile } from "@/lib/accounts/service";
import { PROTOCOL_VERSION } from "@/lib/agent/protocol";
import type { Actor } from "@/lib/audit/service";
import { backupAccount, backupStatus, withBackupLease } from "@/lib/backups/service";
import { assignDatabaseBodySchema, createDatabaseBodySchema, createDatabaseUserBodySchema } from "@/lib/databases/schemas";
import { assignDatabase, createDatabase, createDatabaseUser, deleteDatabase, deleteDatabaseUser, detachDatabase, listDatabases } from "@/lib/databases/service";
import { createCronJobBodySchema, updateCronJobBodySchema } from "@/lib/cron/schemas";
import { createCronJob, deleteCronJob, listCronJobs, updateCronJob } from "@/lib/cron/service";
import { createDnsRecordBodySchema, updateDnsRecordBodySchema } from "@/lib/dns/schemas";
import { createDnsRecord, deleteDnsRecord, listDnsRecords, updateDnsRecord } from "@/lib/dns/service";
import { createDomainBodySchema, updateDomainBodySchema } from "@/lib/domains/schemas";
import { createDomain, deleteDomain, listDomains, updateDomain } from "@/lib/domains/service";
import { hostedAccounts } from "@/lib/hosting/service";
import { toErrorResponse } from "@/lib/http/respond";
import { advanceMoves } from "@/lib/moves/driver";
import { openMoveOf } from "@/lib/moves/records";
import { startMoveSchema } from "@/lib/moves/schemas";
import { cancelMove, startMove } from "@/lib/moves/service";
import { recordJobResult } from "@/lib/nodes/dispatch";
import { createNodeSchema, joinNodeSchema, updateNodeSchema } from "@/lib/nodes/schemas";
import { createNode, deleteNode, joinNode, listNodes, recordHeartbeat, updateNode } from "@/lib/nodes/service";
import { addPhpVersion } from "@/lib/php/service";
import { updatePhpSettingsSchema } from "@/lib/php-settings/schemas";
import { getPhpSettings, updatePhpSettings } from "@/lib/php-settings/service";
import { createPlan, updatePlan } from "@/lib/plans/service";
import { createReseller } from "@/lib/resellers/service";
import { createSshKeyBodySchema } from "@/lib/ssh/schemas";
import { addSshKey, deleteSshKey, listSshKeys } from "@/lib/ssh/service";
import { type Backend, createTestDatabase, testBackends } from "../support/database";
import { ed25519KeyLine } from "../support/ssh-keys";
import { useStandInNodes } from "../support/stand-in-agent";

// The suites whose subject is the machine (nginx, PHP-FPM, OpenSSH, restic, test nodes, moves,
// WordPress, backups) run on one database backend. This file is what lets them: the service
// calls of lib/ those suites go through run here, in one sequence, on PGlite and on PostgreSQL,
// and each call's answer (its value, or its refusal as the API would answer it) and every row of
// every table afterwards must be the same on both. Failure paths that depend on the storage
// itself are in the sequence: unique violations, transactions that fail half-way, and two
// writers of one row at once.
//
// Nodes are real to the panel: a NATS server of this file's own, nodes enrolled with joinNode,
// and a stand-in agent that answers their jobs (it records nothing; what matters here is what
// the panel writes). Everything runs in this process, no panel server.

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "panel-parity-"));
const dataDir = path.join(scratch, "data");

// The panel's configuration in this process, read once on first use (lib/env.ts): nothing of the
// machine (no web server, Linux users, SSH or MariaDB), files under this file's own directory.
// NATS_URL follows once this file's NATS server listens (before()), ahead of the first use.
for (const name of ["DATABASE_URL", "MYSQL_PROVISION_URL", "WEB_SERVER", "SYSTEM_USERS", "SSH_SERVER", "HOME_ROOT", "CERTS_DIR", "BACKUP_REPOSITORY", "NATS_AUTH_FILE", "NATS_RELOAD_COMMAND", "ACME_DIRECTORY_URL"]) {
  delete process.env[name];
}
Object.assign(process.env, {
  DATA_DIR: dataDir,
  ZONES_DIR: path.join(dataDir, "zones"),
  PUBLIC_URL: "https://panel.example.net",
  DNS_NAMESERVERS: "ns1.example.net,ns2.example.net",
  SERVER_IPV4: "192.0.2.1",
  MOVE_REPOSITORY: path.join(scratch, "moves"),
  NATS_SEED_FILE: path.join(scratch, "nats-panel.nk"),
  // The stand-in agent's server listens on loopback only, without TLS (what is tested is storage).
  NATS_INSECURE: "1",
  // A job the stand-in agent holds on purpose is answered well within this.
  NODE_JOB_TIMEOUT_S: "10",
});

const admin: Actor = { type: "cli" };

// Made once, so both backends are given the same keys.
const sshKeyLine = ed25519KeyLine();
const nodeKeys = { n2: createUser().getPublicKey(), n3: createUser().getPublicKey() };
const heartbeat = { agent_version: "0.0.1", protocol: PROTOCOL_VERSION, disk: { total_bytes: 100_000, used_bytes: 25_000 }, load: [0.5, 0.25, 0.125] };

const agent = useStandInNodes(scratch);

// ---- the sequence ----

/** What one run keeps between steps: the ids and tokens earlier answers gave. */
interface Run {
  db: Database;
  ids: Record<string, number>;
  tokens: Record<string, string>;
}

interface Step {
  name: string;
  /** "ok", or the HTTP status the API would answer the refusal with. */
  expect: "ok" | number;
  run(run: Run): Promise<unknown>;
}

const id = (run: Run, name: string) => {
  const value = run.ids[name];
  assert.ok(value !== undefined, `no id named ${name} yet`);
  return value;
};
const remember = <T extends { id: number }>(run: Run, name: string, record: T): T => {
  run.ids[name] = record.id;
  return record;
};
const recordHeartbeats = async (db: Database) => {
  // A node takes jobs for 15 s after its last heartbeat (lib/nodes/service.ts nodeStateOf).
  await recordHeartbeat(db, "n2", heartbeat);
  await recordHeartbeat(db, "n3", heartbeat);
};
/** A new account; its id and its main domain's id are kept under its username and domain. */
async function newAccount(run: Run, input: CreateAccountInput) {
  const account = remember(run, input.username, await createAccount(run.db, input, admin));
  run.ids[account.domain] = (await listDomains(run.db, account.id))[0].id;
  return account;
}
const accountOf = async (run: Run, username: string) => ({ id: id(run, username), username });
/** `call` with n2 and n3 answering: heartbeats first, however slowly the steps before ran. */
const withNodesAnswering = async <T>(run: Run, call: () => Promise<T>): Promise<T> => {
  await recordHeartbeats(run.db);
  return call();
};

const steps: Step[] = [
  // Plans and a reseller.
  { name: "a plan is created", expect: "ok", run: async (r) => remember(r, "small", await createPlan(r.db, { name: "small", max_domains: 6, max_cron_jobs: 2, max_php_memory_mb: 512 }, admin)) },
  { name: "a second plan of the same name is a 422 (unique violation)", expect: 422, run: (r) => createPlan(r.db, { name: "small" }, admin) },
  { name: "a reseller is created", expect: "ok", run: async (r) => remember(r, "res1", await createReseller(r.db, { username: "res1" }, admin)) },
  { name: "a second reseller of the same name is a 422 (unique violation)", expect: 422, run: (r) => createReseller(r.db, { username: "res1" }, admin) },

  // Accounts on the panel's own machine.
  { name: "alice is created on the small plan, for res1", expect: "ok", run: (r) => newAccount(r, { username: "alice", domain: "alice.example", plan: "small", reseller: "res1", email: "alice@example.net" }) },
  { name: "bob is created on the default plan", expect: "ok", run: (r) => newAccount(r, { username: "bob", domain: "bob.example" }) },
  { name: "a second alice is a 422 (unique violation inside the transaction)", expect: 422, run: (r) => createAccount(r.db, { username: "alice", domain: "other.example" }, admin) },
  { name: "mallory with alice's domain fails after its account row was written", expect: 422, run: (r) => createAccount(r.db, { username: "mallory", domain: "alice.example" }, admin) },
  { name: "…and leaves no account behind", expect: "ok", run: async (r) => ({ mallory: await findAccountIdByUsername(r.db, "mallory") }) },
  { name: "alice's admin fields change", expect: "ok", run: (r) => updateAccountAdminFields(r.db, id(r, "alice"), { has_ssh_access: true, email: "owner@example.net", company: "Alice Ltd" }, admin) },
  { name: "an unknown plan is a 422 and changes nothing", expect: 422, run: (r) => updateAccountAdminFields(r.db, id(r, "alice"), { plan: "nonesuch", company: "Changed" }, admin) },
  { name: "alice's profile changes", expect: "ok", run: (r) => updateAccountProfile(r.db, id(r, "alice"), { city: "Lyon", is_auto_ssl_enabled: false }) },
  { name: "alice is suspended", expect: "ok", run: (r) => suspendAccount(r.db, ADMIN, id(r, "alice"), "unpaid invoice", admin) },
  { name: "alice is unsuspended", expect: "ok", run: (r) => unsuspendAccount(r.db, ADMIN, id(r, "alice"), admin) },

  // Domains and their sites.
  { name: "an addon domain", expect: "ok", run: async (r) => remember(r, "shop", await createDomain(r.db, id(r, "alice"), createDomainBodySchema.parse({ domain: "shop.example", domain_type: "domain" }))) },
  { name: "a subdomain", expect: "ok", run: async (r) => remember(r, "blog", await createDomain(r.db, id(r, "alice"), createDomainBodySchema.parse({ domain: "blog", domain_type: "subdomain", parent_domain_id: id(r, "alice.example") }))) },
  { name: "a parked domain", expect: "ok", run: async (r) => remember(r, "parked", await createDomain(r.db, id(r, "alice"), createDomainBodySchema.parse({ domain: "alice-parked.example", domain_type: "parked", parked_on_domain_id: id(r, "alice.example") }))) },
  { name: "a proxied site", expect: "ok", run: async (r) => remember(r, "app", await createDomain(r.db, id(r, "alice"), createDomainBodySchema.parse({ domain: "app.example", domain_type: "domain", site_profile: "proxy", proxy_socket: "app.sock" }))) },
  { name: "the same domain again is a 422", expect: 422, run: (r) => createDomain(r.db, id(r, "alice"), createDomainBodySchema.parse({ domain: "shop.example", domain_type: "domain" })) },
  { name: "bob's name inside alice's domain is a 422", expect: 422, run: (r) => createDomain(r.db, id(r, "bob"), createDomainBodySchema.parse({ domain: "mail.alice.example", domain_type: "domain" })) },
  { name: "the proxied site becomes static", expect: "ok", run: (r) => updateDomain(r.db, id(r, "alice"), id(r, "app"), updateDomainBodySchema.parse({ site_profile: "static" })) },
  { name: "the main domain cannot be deleted", expect: 422, run: (r) => deleteDomain(r.db, id(r, "alice"), id(r, "alice.example")) },
  { name: "the addon domain is deleted", expect: "ok", run: (r) => deleteDomain(r.db, id(r, "alice"), id(r, "shop")) },
  { name: "alice's domains", expect: "ok", run: (r) => listDomains(r.db, id(r, "alice")) },

  // PHP.
  { name: "a PHP version is added", expect: "ok", run: async (r) => remember(r, "php82", await addPhpVersion(r.db, { version: "8.2" }, admin)) },
  { name: "the same PHP version again is a 422 (unique violation)", expect: 422, run: (r) => addPhpVersion(r.db, { version: "8.2" }, admin) },
  { name: "the blog runs PHP 8.2", expect: "ok", run: (r) => configurePhp(r.db, id(r, "alice"), configurePhpBodySchema.parse({ domain_id: id(r, "blog"), php_version_id: id(r, "php82") })) },
  { name: "alice's PHP settings change (upsert)", expect: "ok", run: (r) => updatePhpSettings(r.db, id(r, "alice"), updatePhpSettingsSchema.parse({ memory_limit_mb: 384, display_errors: true })) },
  { name: "…and change again (the upsert's update)", expect: "ok", run: (r) => updatePhpSettings(r.db, id(r, "alice"), updatePhpSettingsSchema.parse({ max_input_vars: 5000 })) },
  { name: "memory above the plan's cap is a 422", expect: 422, run: (r) => updatePhpSettings(r.db, id(r, "alice"), updatePhpSettingsSchema.parse({ memory_limit_mb: 1024 })) },
  { name: "alice's PHP settings in force", expect: "ok", run: (r) => getPhpSettings(r.db, id(r, "alice")) },
  { name: "alice's hosting as a node is given it", expect: "ok", run: async (r) => [...(await hostedAccounts(r.db, [id(r, "alice")])).values()] },

  // Zone records.
  { name: "an A record", expect: "ok", run: async (r) => remember(r, "www", await createDnsRecord(r.db, id(r, "alice"), createDnsRecordBodySchema.parse({ domain_id: id(r, "alice.example"), name: "www", type: "A", content: "192.0.2.50", ttl: 300 }))) },
  { name: "an MX record", expect: "ok", run: async (r) => remember(r, "mx", await createDnsRecord(r.db, id(r, "alice"), createDnsRecordBodySchema.parse({ domain_id: id(r, "alice.example"), name: "@", type: "MX", content: "mail.example.net.", priority: 10, ttl: 3600 }))) },
  { name: "an identical MX record is a 422", expect: 422, run: (r) => createDnsRecord(r.db, id(r, "alice"), createDnsRecordBodySchema.parse({ domain_id: id(r, "alice.example"), name: "@", type: "MX", content: "mail.example.net.", priority: 10, ttl: 600 })) },
  { name: "a CNAME beside the A record is a 422", expect: 422, run: (r) => createDnsRecord(r.db, id(r, "alice"), createDnsRecordBodySchema.parse({ domain_id: id(r, "alice.example"), name: "www", type: "CNAME", content: "alice.example.", ttl: 300 })) },
  { name: "the A record changes", expect: "ok", run: (r) => updateDnsRecord(r.db, id(r, "alice"), id(r, "www"), updateDnsRecordBodySchema.parse({ content: "192.0.2.51", ttl: 600 })) },
  { name: "the MX record is deleted", expect: "ok", run: (r) => deleteDnsRecord(r.db, id(r, "alice"), id(r, "mx")) },
  { name: "bob cannot delete alice's record", expect: 404, run: (r) => deleteDnsRecord(r.db, id(r, "bob"), id(r, "www")) },
  { name: "alice's zone", expect: "ok", run: (r) => listDnsRecords(r.db, id(r, "alice"), id(r, "alice.example")) },

  // Databases, users and grants (records only: no MYSQL_PROVISION_URL).
  { name: "a database", expect: "ok", run: async (r) => remember(r, "alice_shop", await createDatabase(r.db, await accountOf(r, "alice"), createDatabaseBodySchema.parse({ database_name: "shop" }))) },
  { name: "a second database", expect: "ok", run: async (r) => remember(r, "alice_wp", await createDatabase(r.db, await accountOf(r, "alice"), createDatabaseBodySchema.parse({ database_name: "alice_wp" }))) },
  { name: "the same database again is a 422 (unique violation inside the transaction)", expect: 422, run: async (r) => createDatabase(r.db, await accountOf(r, "alice"), createDatabaseBodySchema.parse({ database_name: "shop" })) },
  { name: "a database user", expect: "ok", run: async (r) => remember(r, "alice_app", await createDatabaseUser(r.db, await accountOf(r, "alice"), createDatabaseUserBodySchema.parse({ username: "app", password: "correct horse battery" }))) },
  { name: "the user gets two privileges on the database", expect: "ok", run: (r) => assignDatabase(r.db, id(r, "alice"), id(r, "alice_app"), assignDatabaseBodySchema.parse({ database_id: id(r, "alice_shop"), privileges: ["select", "INSERT", "SELECT"] })) },
  { name: "…then all of them", expect: "ok", run: (r) => assignDatabase(r.db, id(r, "alice"), id(r, "alice_app"), assignDatabaseBodySchema.parse({ database_id: id(r, "alice_shop") })) },
  { name: "…and some on the second database", expect: "ok", run: (r) => assignDatabase(r.db, id(r, "alice"), id(r, "alice_app"), assignDatabaseBodySchema.parse({ database_id: id(r, "alice_wp"), privileges: ["SELECT"] })) },
  { name: "a database with a user is not deleted (409)", expect: 409, run: (r) => deleteDatabase(r.db, id(r, "alice"), id(r, "alice_shop")) },
  { name: "the user is detached from the second database", expect: "ok", run: (r) => detachDatabase(r.db, id(r, "alice"), id(r, "alice_app"), id(r, "alice_wp")) },
  { name: "detaching again is a 404", expect: 404, run: (r) => detachDatabase(r.db, id(r, "alice"), id(r, "alice_app"), id(r, "alice_wp")) },
  { name: "the second database is deleted", expect: "ok", run: (r) => deleteDatabase(r.db, id(r, "alice"), id(r, "alice_wp")) },
  { name: "a user with a database is not deleted (409)", expect: 409, run: (r) => deleteDatabaseUser(r.db, id(r, "alice"), id(r, "alice_app")) },
  { name: "alice's databases", expect: "ok", run: (r) => listDatabases(r.db, id(r, "alice")) },

  // Cron jobs.
  { name: "a cron job", expect: "ok", run: async (r) => remember(r, "cron1", await createCronJob(r.db, id(r, "alice"), createCronJobBodySchema.parse({ schedule: "*/5  * * * *", command: "php artisan schedule:run" }))) },
  { name: "a second cron job", expect: "ok", run: async (r) => remember(r, "cron2", await createCronJob(r.db, id(r, "alice"), createCronJobBodySchema.parse({ schedule: "@daily", command: "wp cron event run --due-now", is_enabled: false }))) },
  { name: "a third is over the plan's quota (422)", expect: 422, run: (r) => createCronJob(r.db, id(r, "alice"), createCronJobBodySchema.parse({ schedule: "@hourly", command: "true" })) },
  { name: "the first cron job changes", expect: "ok", run: (r) => updateCronJob(r.db, id(r, "alice"), id(r, "cron1"), updateCronJobBodySchema.parse({ schedule: "0 3 * * *", is_enabled: false })) },
  { name: "the second is removed", expect: "ok", run: (r) => deleteCronJob(r.db, id(r, "alice"), id(r, "cron2")) },
  { name: "bob cannot change alice's cron job", expect: 404, run: (r) => updateCronJob(r.db, id(r, "bob"), id(r, "cron1"), updateCronJobBodySchema.parse({ is_enabled: true })) },
  { name: "alice's cron jobs", expect: "ok", run: (r) => listCronJobs(r.db, id(r, "alice")) },

  // SSH keys.
  { name: "an SSH key", expect: "ok", run: async (r) => remember(r, "key1", await addSshKey(r.db, id(r, "alice"), createSshKeyBodySchema.parse({ name: "laptop", public_key: `${sshKeyLine} alice@laptop` }))) },
  { name: "the same key again is a 422 (unique violation inside the transaction)", expect: 422, run: (r) => addSshKey(r.db, id(r, "alice"), createSshKeyBodySchema.parse({ name: "again", public_key: sshKeyLine })) },
  { name: "the same key on bob's account is another row", expect: "ok", run: async (r) => remember(r, "bobkey", await addSshKey(r.db, id(r, "bob"), createSshKeyBodySchema.parse({ name: "shared", public_key: sshKeyLine }))) },
  { name: "bob cannot delete alice's key", expect: 404, run: (r) => deleteSshKey(r.db, id(r, "bob"), id(r, "key1")) },
  { name: "alice's keys", expect: "ok", run: (r) => listSshKeys(r.db, id(r, "alice")) },

  // Nodes: added, enrolled, heard from, changed.
  { name: "node n2 is added with an enrolment token", expect: "ok", run: async (r) => keepToken(r, "n2", await createNode(r.db, createNodeSchema.parse({ name: "n2", ipv4: "192.0.2.2", ssh_host: "n2.example.net" }), admin)) },
  { name: "node n3 is added", expect: "ok", run: async (r) => keepToken(r, "n3", await createNode(r.db, createNodeSchema.parse({ name: "n3", ipv4: "192.0.2.3" }), admin)) },
  { name: "node n4 is added", expect: "ok", run: async (r) => keepToken(r, "n4", await createNode(r.db, createNodeSchema.parse({ name: "n4", ipv4: "192.0.2.4" }), admin)) },
  { name: "a second n2 is a 422", expect: 422, run: (r) => createNode(r.db, createNodeSchema.parse({ name: "n2", ipv4: "192.0.2.9" }), admin) },
  { name: "n2 joins with its token", expect: "ok", run: (r) => joinNode(r.db, joinNodeSchema.parse({ token: r.tokens.n2, public_key: nodeKeys.n2, agent_version: "0.0.1", protocol: PROTOCOL_VERSION })) },
  { name: "n2's token a second time is a 401", expect: 401, run: (r) => joinNode(r.db, joinNodeSchema.parse({ token: r.tokens.n2, public_key: nodeKeys.n3, agent_version: "0.0.1", protocol: PROTOCOL_VERSION })) },
  { name: "n3 offering n2's key is a 422 and keeps its token", expect: 422, run: (r) => joinNode(r.db, joinNodeSchema.parse({ token: r.tokens.n3, public_key: nodeKeys.n2, agent_version: "0.0.1", protocol: PROTOCOL_VERSION })) },
  { name: "n3 joins", expect: "ok", run: (r) => joinNode(r.db, joinNodeSchema.parse({ token: r.tokens.n3, public_key: nodeKeys.n3, agent_version: "0.0.1", protocol: PROTOCOL_VERSION })) },
  { name: "n4, which never joined, is removed", expect: "ok", run: (r) => deleteNode(r.db, id(r, "n4"), admin) },
  { name: "n2 and n3 send heartbeats", expect: "ok", run: (r) => withNodesAnswering(r, async () => (await listNodes(r.db)).nodes) },
  { name: "dave is created on n2 (its agent provisions him)", expect: "ok", run: (r) => withNodesAnswering(r, () => newAccount(r, { username: "dave", domain: "dave.example", plan: "small", node: "n2" })) },
  { name: "erin is created on n2", expect: "ok", run: (r) => withNodesAnswering(r, () => newAccount(r, { username: "erin", domain: "erin.example", node: "n2" })) },
  { name: "dave is suspended on n2", expect: "ok", run: (r) => withNodesAnswering(r, () => suspendAccount(r.db, ADMIN, id(r, "dave"), undefined, admin)) },
  { name: "dave is unsuspended on n2", expect: "ok", run: (r) => withNodesAnswering(r, () => unsuspendAccount(r.db, ADMIN, id(r, "dave"), admin)) },
  { name: "n2 changes address: its accounts' zones follow", expect: "ok", run: (r) => withNodesAnswering(r, () => updateNode(r.db, id(r, "n2"), updateNodeSchema.parse({ ipv4: "192.0.2.22" }), admin)) },
  { name: "the small plan's disk changes: n2's account gets a queued quota job", expect: "ok", run: (r) => updatePlan(r.db, id(r, "small"), { disk_mb: 2048 }, admin) },
  { name: "n2 reports the queued job done", expect: "ok", run: async (r) => recordJobResult(r.db, id(r, "n2"), { id: await queuedJobOf(r, "dave"), ok: true, value: null }) },
  { name: "…and a second report of it changes nothing", expect: "ok", run: async (r) => recordJobResult(r.db, id(r, "n2"), { id: await queuedJobOf(r, "dave"), ok: false, error: { code: "INTERNAL", message: "late" } }) },
  { name: "dave's account, with its node's sync", expect: "ok", run: (r) => getAccount(r.db, id(r, "dave")) },

  // Moves.
  { name: "n3 is draining", expect: "ok", run: (r) => withNodesAnswering(r, () => updateNode(r.db, id(r, "n3"), updateNodeSchema.parse({ state: "draining" }), admin)) },
  { name: "a move to a draining node is a 422", expect: 422, run: (r) => startMove(r.db, id(r, "alice"), startMoveSchema.parse({ node: "n3" }), admin) },
  { name: "n3 is active again", expect: "ok", run: (r) => withNodesAnswering(r, () => updateNode(r.db, id(r, "n3"), updateNodeSchema.parse({ state: "active" }), admin)) },
  {
    name: "two moves of alice asked at once: one is queued, the other is a 409",
    expect: "ok",
    run: async (r) => {
      const answers = await Promise.all([1, 2].map(() => outcomeOf(() => startMove(r.db, id(r, "alice"), startMoveSchema.parse({ node: "n3" }), admin))));
      assert.deepEqual(answers.map((answer) => ("ok" in answer ? "ok" : answer.status)).sort(), [409, "ok"], "one move queued, one refused");
      // Which caller won is the scheduler's choice: the answers, in a fixed order.
      return answers.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    },
  },
  { name: "alice's open move", expect: "ok", run: (r) => openMoveOf(r.db, id(r, "alice")) },
  { name: "alice cannot be suspended while she moves (409)", expect: 409, run: (r) => suspendAccount(r.db, ADMIN, id(r, "alice"), undefined, admin) },
  { name: "alice's queued move is cancelled: it simply ends", expect: "ok", run: (r) => cancelMove(r.db, id(r, "alice"), admin) },
  { name: "cancelling again is a 404", expect: 404, run: (r) => cancelMove(r.db, id(r, "alice"), admin) },
  { name: "dave moves to n3: his records naming n2 get the short TTL", expect: "ok", run: (r) => startMove(r.db, id(r, "dave"), startMoveSchema.parse({ node: "n3" }), admin) },
  {
    name: "the DNS caches of dave's records have cleared (their hour is not waited for here)",
    expect: "ok",
    run: async (r) => r.db.update(accountMoves).set({ cachesClearAt: new Date(Date.now() - 1000) }).where(eq(accountMoves.accountId, id(r, "dave"))).returning(),
  },
  {
    name: "two drivers at once: one holds dave's move, the other returns, and the move runs to its forward",
    expect: "ok",
    run: async (r) => {
      await recordHeartbeats(r.db);
      // The winner is kept inside its first step (preparing: n3 gets the account) until released.
      const held = agent().hold("n3", "account.ensure");
      const drivers = ["driver-a", "driver-b"].map((holder) => advanceMoves(r.db, holder).then(() => holder));
      const returned = await Promise.race(drivers);
      await held.reached;
      const [whileHeld] = await r.db.select().from(accountMoves).where(eq(accountMoves.accountId, id(r, "dave")));
      held.release();
      await Promise.all(drivers);
      const [ended] = await r.db.select().from(accountMoves).where(eq(accountMoves.accountId, id(r, "dave")));
      return {
        heldByTheOtherDriver: whileHeld.leaseHolder !== null && whileHeld.leaseHolder !== returned,
        stepWhileHeld: whileHeld.state,
        leaseUntilSet: whileHeld.leaseExpiresAt !== null,
        ended: { state: ended.state, leaseHolder: ended.leaseHolder, leaseExpiresAt: ended.leaseExpiresAt, attempts: ended.attempts },
        account: await getAccount(r.db, id(r, "dave")),
      };
    },
  },
  {
    name: "the time of n2's forward of dave is over: the move is done, his records' TTLs given back",
    expect: "ok",
    run: async (r) => {
      await r.db.update(accountMoves).set({ forwardUntil: new Date(Date.now() - 1000) }).where(eq(accountMoves.accountId, id(r, "dave")));
      await recordHeartbeats(r.db);
      await advanceMoves(r.db, "driver-a");
      return getAccount(r.db, id(r, "dave"));
    },
  },
  { name: "dave has no open move", expect: "ok", run: (r) => openMoveOf(r.db, id(r, "dave")) },
  { name: "erin moves to n3", expect: "ok", run: (r) => startMove(r.db, id(r, "erin"), startMoveSchema.parse({ node: "n3" }), admin) },
  {
    name: "n3 refuses erin: the move stays in preparing with one failed attempt",
    expect: "ok",
    run: async (r) => {
      await recordHeartbeats(r.db);
      agent().refuseWhen((node, job) => (node === "n3" && job.op === "account.ensure" && (job.args as { state: { account: { username: string } } }).state.account.username === "erin" ? "the test's n3 refuses erin" : null));
      await advanceMoves(r.db, "driver-a");
      return openMoveOf(r.db, id(r, "erin"));
    },
  },
  { name: "erin's move is cancelled: cancelling", expect: "ok", run: (r) => cancelMove(r.db, id(r, "erin"), admin) },
  {
    name: "the driver removes erin's copy from n3: cancelled",
    expect: "ok",
    run: async (r) => {
      await recordHeartbeats(r.db);
      await advanceMoves(r.db, "driver-a");
      return getAccount(r.db, id(r, "erin"));
    },
  },

  // Backup run records.
  { name: "dave is backed up on n3", expect: "ok", run: (r) => withNodesAnswering(r, () => backupAccount(r.db, id(r, "dave"))) },
  {
    name: "erin's backup is refused by n2: the failure is recorded",
    expect: 422,
    run: async (r) => {
      agent().refuseWhen((node, job) => (node === "n2" && job.op === "backup.parts" ? "the test's n2 has no room for backups" : null));
      return withNodesAnswering(r, () => backupAccount(r.db, id(r, "erin")));
    },
  },
  {
    name: "two backup runs at once: one holds the repository, the other is refused",
    expect: "ok",
    run: async (r) => {
      // Each run waits inside its lease until both have either started or been refused.
      let settled = 0;
      let bothSettled!: () => void;
      const gate = new Promise<void>((resolve) => (bothSettled = resolve));
      const settle = () => ++settled === 2 && bothSettled();
      const runs = [1, 2].map(async () => {
        const outcome = await withBackupLease(r.db, async () => {
          settle();
          await gate;
          return "ran";
        });
        if (outcome === null) settle();
        return outcome;
      });
      return (await Promise.all(runs)).map((outcome) => outcome?.result ?? "refused").sort();
    },
  },
  { name: "the backup status of every account", expect: "ok", run: (r) => backupStatus(r.db, ADMIN) },

  // The end of accounts.
  { name: "bob is terminated", expect: "ok", run: (r) => terminateAccount(r.db, ADMIN, id(r, "bob"), admin) },
  { name: "erin is terminated on n2", expect: "ok", run: (r) => withNodesAnswering(r, () => terminateAccount(r.db, ADMIN, id(r, "erin"), admin)) },
  { name: "terminating bob again is a 404", expect: 404, run: (r) => terminateAccount(r.db, ADMIN, id(r, "bob"), admin) },
  { name: "the nodes at the end", expect: "ok", run: (r) => withNodesAnswering(r, async () => (await listNodes(r.db)).nodes) },
];

/** A new node's answer, its one-time token kept for the join. */
function keepToken(run: Run, name: string, created: { id: number; enrolment_token: string }) {
  run.tokens[name] = created.enrolment_token;
  return remember(run, name, created);
}

/** The job id of the account's newest queued job (what a node's result names). */
async function queuedJobOf(run: Run, username: string): Promise<string> {
  const rows = await run.db.select({ jobId: nodeJobs.jobId, accountId: nodeJobs.accountId }).from(nodeJobs).orderBy(nodeJobs.id);
  const row = rows.filter((job) => job.accountId === id(run, username)).at(-1);
  assert.ok(row, `no queued job of ${username}`);
  return row.jobId;
}

// ---- what a step answered, and what the tables hold ----

type Outcome = { ok: unknown } | { status: number; body: unknown };

/** A value as the API would answer it, or the refusal as the API would answer it (status and body). */
async function outcomeOf(call: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: normalise(await call()) };
  } catch (error) {
    const response = toErrorResponse(error, "storage parity step");
    return { status: response.status, body: await response.json() };
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** A backup run's id, made of the time it started (lib/backups/service.ts). */
const RUN_ID = /^\d{8}-\d{9}$/;
/** Made at random by the panel: whether they are there is what both backends must agree on. */
const SECRETS = new Set(["enrolment_token", "enrolmentTokenHash", "repositoryPassword"]);

/**
 * What legitimately differs between two runs, replaced: times (a Date or an ISO string), random
 * ids and tokens, and the random part of a move's repository name. Everything else — ids
 * included, since both databases start with the same sequences (readSequences checks it) — is
 * compared as it is.
 */
function normalise(value: unknown, key = ""): unknown {
  if (SECRETS.has(key)) return value === null || value === undefined ? value : "<present>";
  if (value instanceof Date) return "<time>";
  if (typeof value === "string") {
    if (UUID.test(value)) return "<uuid>";
    if (ISO_TIME.test(value)) return "<time>";
    if (RUN_ID.test(value)) return "<run>";
    if (key === "repository") return value.replace(/-[0-9a-z]+-[0-9a-f]{8}$/, "-<key>");
    // A move's wait in seconds left, counted from the clock.
    if (key === "waiting") return value.replace(/\d+ s left$/, "<n> s left");
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => normalise(item));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, key === "payload" && name === "expires_at" ? "<time>" : normalise(item, name)]));
  }
  return value;
}

const tables: PgTable[] = (Object.values(schema) as unknown[]).filter((value): value is PgTable => is(value, PgTable));

/** Every row of every table, normalised, in an order that does not depend on the backend. */
async function readTables(db: Database): Promise<Record<string, unknown[]>> {
  const all: Record<string, unknown[]> = {};
  for (const table of tables) {
    const rows = (await db.select().from(table)).map((row) => normalise(row));
    all[getTableConfig(table).name] = rows.map((row) => [JSON.stringify(row), row] as const).sort(([a], [b]) => a.localeCompare(b)).map(([, row]) => row);
  }
  return all;
}

/**
 * Each identity sequence's last value. Ids are compared as they are, which holds only if both
 * databases start with the same ones; at the end they also say that both consumed the same values
 * (a failed insert consumes one on either).
 */
async function readSequences(db: Database): Promise<unknown[]> {
  const result = await db.execute(sql`select sequencename as name, last_value as value from pg_sequences where schemaname = 'public' order by sequencename`);
  // postgres.js answers the rows, PGlite an object holding them.
  const rows = (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as { name: string; value: string | number | null }[];
  return rows.map((row) => ({ name: row.name, value: row.value === null ? null : Number(row.value) }));
}

interface RunResult {
  sequencesAtStart: unknown[];
  outcomes: { step: string; outcome: Outcome }[];
  tables: Record<string, unknown[]>;
  sequencesAtEnd: unknown[];
}

async function runSequence(backend: Backend): Promise<RunResult> {
  // Files the services write (zone files, homes, certificates) start empty for each backend.
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(dataDir, { recursive: true });
  agent().refuseWhen(() => null);
  const database = await createTestDatabase(backend);
  const connection = await database.open();
  try {
    const run: Run = { db: connection.db, ids: {}, tokens: {} };
    const sequencesAtStart = await readSequences(connection.db);
    const outcomes: RunResult["outcomes"] = [];
    for (const step of steps) {
      const outcome = await outcomeOf(() => step.run(run));
      if (step.expect === "ok") assert.ok("ok" in outcome, `${backend}: "${step.name}" should succeed: ${JSON.stringify(outcome)}`);
      else assert.equal("status" in outcome ? outcome.status : "ok", step.expect, `${backend}: "${step.name}" should be refused with ${step.expect}: ${JSON.stringify(outcome)}`);
      outcomes.push({ step: step.name, outcome });
    }
    return { sequencesAtStart, outcomes, tables: await readTables(connection.db), sequencesAtEnd: await readSequences(connection.db) };
  } finally {
    await connection.close();
    await database.drop();
  }
}

// ---- the test ----

describe("storage parity: the machine suites' service calls answer and store alike on PGlite and PostgreSQL", () => {
  const results = new Map<Backend, RunResult>();
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  for (const backend of testBackends()) {
    test(`the sequence (${steps.length} steps) answers as expected on ${backend}`, async () => {
      results.set(backend, await runSequence(backend));
    });
  }

  const backends = testBackends();
  test(
    "both backends gave the same answers and left the same rows",
    { skip: backends.length < 2 ? `TEST_BACKENDS names only ${backends.join(",") || "no backend"}: nothing to compare` : false },
    () => {
      const [first, second] = backends.map((backend) => results.get(backend));
      assert.ok(first && second, "a backend's run did not finish");
      // Item by item, so a failure names every step and table that differs and shows the first.
      const compared: [what: string, first: unknown, second: unknown][] = [
        ["the sequences at the start", first.sequencesAtStart, second.sequencesAtStart],
        ...first.outcomes.map((outcome, index): [string, unknown, unknown] => [`the answer of step "${outcome.step}"`, outcome, second.outcomes[index]]),
        ...Object.keys(first.tables).map((table): [string, unknown, unknown] => [`the rows of ${table}`, first.tables[table], second.tables[table]]),
        ["the sequences at the end", first.sequencesAtEnd, second.sequencesAtEnd],
      ];
      const differing = compared.filter(([, a, b]) => !isDeepStrictEqual(a, b));
      if (differing.length === 0) return;
      const [what, a, b] = differing[0];
      assert.deepStrictEqual(a, b, `${backends[0]} and ${backends[1]} differ in ${differing.length} place(s): ${differing.map(([name]) => name).join("; ")}. The first, ${what} (${backends[0]} actual, ${backends[1]} expected):`);
    },
  );
});
