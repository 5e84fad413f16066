import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { z } from "zod";
import type { Database } from "@/db/client";
import type { HostingAccountRecord } from "@/lib/accounts/schemas";
import { createAccount } from "@/lib/accounts/service";
import { assignDatabase, createDatabase, createDatabaseUser } from "@/lib/databases/service";
import { createDnsRecord, listDnsRecords } from "@/lib/dns/service";
import { createDomain, listDomains } from "@/lib/domains/service";
import { endpointOf } from "@/lib/http/operation";
import { operations } from "@/lib/http/registry";
import { addPhpVersion } from "@/lib/php/service";
import { createCronJob } from "@/lib/cron/service";
import { createAlias, createMailbox, listMailDomains } from "@/lib/email/service";
import { addSshKey } from "@/lib/ssh/service";
import { createReseller } from "@/lib/resellers/service";
import { testBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { type ApiResponse, call } from "../support/http";
import { makeKey, seedActor, seedTenants } from "../support/seed";
import { ed25519KeyLine } from "../support/ssh-keys";

// Tenant isolation, as a matrix: every client operation that takes an id (in the path, the
// query or the body) × every way a caller can act on an account, always with ids that belong to
// an account other than the one acted on. Each cell proves three things:
//   1. the status DESIGN.md gives (404 `{error}`, or 422 for a foreign parent/parked-on domain),
//   2. the same answer as for an id (or account) that does not exist: existence never leaks,
//   3. nothing changed, read back through the API by each account's own key.
//
// The cast: reseller res1 owns alice and carol, reseller res2 owns dave, bob has no reseller.
// Each account holds the same things (below), so a missing ownership check would succeed.

type Username = "alice" | "bob" | "carol" | "dave";
const usernames: Username[] = ["alice", "bob", "carol", "dave"];

/** What each account holds. A linked pair (user ↔ database, SELECT) and an unlinked pair. */
interface Holdings {
  domain: string;
  domainId: number;
  recordId: number; // `www A 192.0.2.10`
  soaId: number;
  databaseId: number; // linked to userId
  userId: number;
  freeDatabaseId: number; // linked to nothing: a delete would succeed
  freeUserId: number;
  freeDomainId: number; // a subdomain with nothing on it: a delete would succeed
  sshKeyId: number;
  cronJobId: number;
  mailboxId: number;
  mailDomainId: number;
  aliasId: number;
}

/** The ids of nothing: the control every refusal is compared with. */
const MISSING = 2147483647;
const missing: Holdings = {
  domain: "missing.example",
  domainId: MISSING,
  recordId: MISSING,
  soaId: MISSING,
  databaseId: MISSING,
  userId: MISSING,
  freeDatabaseId: MISSING,
  freeUserId: MISSING,
  freeDomainId: MISSING,
  sshKeyId: MISSING,
  cronJobId: MISSING,
  mailboxId: MISSING,
  mailDomainId: MISSING,
  aliasId: MISSING,
};

// ---- the rows: who calls, acting on which account, with whose ids ----

interface Caller {
  name: string;
  key: "aliceKey" | "adminKey" | "resellerKey";
  /** X-Hosting-Account, when sent. */
  header?: (seed: Seed) => string | number;
  /** Whose ids go into the requests. */
  ids: Username;
  /**
   * "record": the account acted on (alice) is accepted and each lookup inside it finds nothing.
   * "account": the named account is refused before any id is looked at: 404 on every route.
   */
  refused: "record" | "account";
}

const callers: Caller[] = [
  { name: "alice's account key", key: "aliceKey", ids: "bob", refused: "record" },
  { name: "alice's account key naming bob (header ignored)", key: "aliceKey", header: () => "bob", ids: "bob", refused: "record" },
  { name: "admin key as alice (username)", key: "adminKey", header: () => "alice", ids: "bob", refused: "record" },
  { name: "admin key as alice (id)", key: "adminKey", header: (s) => s.accounts.alice.id, ids: "bob", refused: "record" },
  { name: "reseller key as its alice, bob's ids", key: "resellerKey", header: () => "alice", ids: "bob", refused: "record" },
  { name: "reseller key as its alice, its carol's ids", key: "resellerKey", header: () => "alice", ids: "carol", refused: "record" },
  { name: "reseller key as bob (no reseller), bob's own ids", key: "resellerKey", header: () => "bob", ids: "bob", refused: "account" },
  { name: "reseller key as dave (res2's, by id), dave's own ids", key: "resellerKey", header: (s) => s.accounts.dave.id, ids: "dave", refused: "account" },
];

// ---- the columns: every id-taking client operation, with the foreign ids it is given ----

interface Ids {
  /** The acting account's own holdings (alice's). */
  mine: Holdings;
  /** The other account's holdings (or `missing`, for the control request). */
  theirs: Holdings;
  phpVersionId: number;
}

interface Route {
  /** The operation, as the registry names it: "METHOD /api/client/...". */
  op: string;
  /** Which ids it gets. */
  what: string;
  path: (ids: Ids) => string;
  body?: (ids: Ids) => object;
  /** When only the ids are foreign; a refused account is always 404. */
  status?: 404 | 422;
  /** The field a 422 names. */
  field?: string;
}

const routes: Route[] = [
  { op: "GET /api/client/databases/{id}", what: "their database", path: ({ theirs }) => `/api/client/databases/${theirs.freeDatabaseId}` },
  { op: "DELETE /api/client/databases/{id}", what: "their unlinked database", path: ({ theirs }) => `/api/client/databases/${theirs.freeDatabaseId}` },
  { op: "DELETE /api/client/databases/{id}", what: "their linked database (404, not 409)", path: ({ theirs }) => `/api/client/databases/${theirs.databaseId}` },

  { op: "GET /api/client/database-users/{id}", what: "their user", path: ({ theirs }) => `/api/client/database-users/${theirs.freeUserId}` },
  { op: "DELETE /api/client/database-users/{id}", what: "their unlinked user", path: ({ theirs }) => `/api/client/database-users/${theirs.freeUserId}` },
  { op: "DELETE /api/client/database-users/{id}", what: "their linked user (404, not 409)", path: ({ theirs }) => `/api/client/database-users/${theirs.userId}` },

  {
    op: "POST /api/client/database-users/{id}/assign-database",
    what: "their user, my database",
    path: ({ theirs }) => `/api/client/database-users/${theirs.freeUserId}/assign-database`,
    body: ({ mine }) => ({ database_id: mine.freeDatabaseId }),
  },
  {
    op: "POST /api/client/database-users/{id}/assign-database",
    what: "my user, their database",
    path: ({ mine }) => `/api/client/database-users/${mine.freeUserId}/assign-database`,
    body: ({ theirs }) => ({ database_id: theirs.freeDatabaseId }),
  },
  {
    op: "POST /api/client/database-users/{id}/assign-database",
    what: "their linked pair, widened to ALL PRIVILEGES",
    path: ({ theirs }) => `/api/client/database-users/${theirs.userId}/assign-database`,
    body: ({ theirs }) => ({ database_id: theirs.databaseId, privileges: ["ALL PRIVILEGES"] }),
  },

  {
    op: "DELETE /api/client/database-users/{id}/databases/{database_id}",
    what: "their linked pair",
    path: ({ theirs }) => `/api/client/database-users/${theirs.userId}/databases/${theirs.databaseId}`,
  },
  {
    op: "DELETE /api/client/database-users/{id}/databases/{database_id}",
    what: "their user, my database",
    path: ({ mine, theirs }) => `/api/client/database-users/${theirs.userId}/databases/${mine.databaseId}`,
  },
  {
    op: "DELETE /api/client/database-users/{id}/databases/{database_id}",
    what: "my user, their database",
    path: ({ mine, theirs }) => `/api/client/database-users/${mine.userId}/databases/${theirs.databaseId}`,
  },

  { op: "GET /api/client/dns-records", what: "their domain_id", path: ({ theirs }) => `/api/client/dns-records?domain_id=${theirs.domainId}` },
  {
    op: "POST /api/client/dns-records",
    what: "their domain_id",
    path: () => "/api/client/dns-records",
    body: ({ theirs }) => ({ domain_id: theirs.domainId, name: "pwn", type: "A", content: "192.0.2.66", ttl: 300 }),
  },
  { op: "GET /api/client/dns-records/{id}", what: "their record", path: ({ theirs }) => `/api/client/dns-records/${theirs.recordId}` },
  {
    op: "PUT /api/client/dns-records/{id}",
    what: "their record",
    path: ({ theirs }) => `/api/client/dns-records/${theirs.recordId}`,
    body: () => ({ content: "192.0.2.66" }),
  },
  {
    op: "PUT /api/client/dns-records/{id}",
    what: "their SOA (404, not 403)",
    path: ({ theirs }) => `/api/client/dns-records/${theirs.soaId}`,
    body: () => ({ ttl: 600 }),
  },
  { op: "DELETE /api/client/dns-records/{id}", what: "their record", path: ({ theirs }) => `/api/client/dns-records/${theirs.recordId}` },
  { op: "DELETE /api/client/dns-records/{id}", what: "their SOA (404, not 403)", path: ({ theirs }) => `/api/client/dns-records/${theirs.soaId}` },

  { op: "GET /api/client/domains/{id}", what: "their domain", path: ({ theirs }) => `/api/client/domains/${theirs.domainId}` },
  { op: "PUT /api/client/domains/{id}", what: "their domain", path: ({ theirs }) => `/api/client/domains/${theirs.domainId}`, body: () => ({ site_profile: "static" }) },
  { op: "DELETE /api/client/domains/{id}", what: "their free subdomain", path: ({ theirs }) => `/api/client/domains/${theirs.freeDomainId}` },
  { op: "DELETE /api/client/domains/{id}", what: "their main domain (404, not 422)", path: ({ theirs }) => `/api/client/domains/${theirs.domainId}` },
  {
    op: "POST /api/client/domains",
    what: "a subdomain of their domain",
    path: () => "/api/client/domains",
    body: ({ theirs }) => ({ domain: "hijack", domain_type: "subdomain", parent_domain_id: theirs.domainId }),
    status: 422,
    field: "parent_domain_id",
  },
  {
    op: "POST /api/client/domains",
    what: "a domain parked on theirs",
    path: () => "/api/client/domains",
    body: ({ theirs }) => ({ domain: "hijack-parked.example", domain_type: "parked", parked_on_domain_id: theirs.domainId }),
    status: 422,
    field: "parked_on_domain_id",
  },

  {
    op: "POST /api/client/backups/{snapshot}/restore",
    what: "a restore point id that is not the account's (tests/api/backups.test.ts does this with real restic runs)",
    path: ({ theirs }) => `/api/client/backups/${theirs === missing ? "20000101-000000000" : "20261125-020000123"}/restore`,
    body: () => ({ path: "public_html/index.html" }),
    status: 422,
    field: "snapshot",
  },
  { op: "DELETE /api/client/ssh-keys/{id}", what: "their SSH key", path: ({ theirs }) => `/api/client/ssh-keys/${theirs.sshKeyId}` },
  {
    op: "PUT /api/client/cron-jobs/{id}",
    what: "their cron job",
    path: ({ theirs }) => `/api/client/cron-jobs/${theirs.cronJobId}`,
    body: () => ({ command: "curl http://attacker.example/" }),
  },
  { op: "DELETE /api/client/cron-jobs/{id}", what: "their cron job", path: ({ theirs }) => `/api/client/cron-jobs/${theirs.cronJobId}` },

  {
    op: "POST /api/client/email/domains",
    what: "their domain as a mail domain",
    path: () => "/api/client/email/domains",
    body: ({ theirs }) => ({ domain: theirs.domain }),
    status: 422,
    field: "domain",
  },
  { op: "POST /api/client/email/domains/{id}/dkim/rotate", what: "their mail domain's DKIM key", path: ({ theirs }) => `/api/client/email/domains/${theirs.mailDomainId}/dkim/rotate` },
  { op: "GET /api/client/email/mailboxes/{id}", what: "their mailbox", path: ({ theirs }) => `/api/client/email/mailboxes/${theirs.mailboxId}` },
  {
    op: "PUT /api/client/email/mailboxes/{id}",
    what: "their mailbox's password",
    path: ({ theirs }) => `/api/client/email/mailboxes/${theirs.mailboxId}`,
    body: () => ({ password: "taken over at last" }),
  },
  { op: "DELETE /api/client/email/mailboxes/{id}", what: "their mailbox", path: ({ theirs }) => `/api/client/email/mailboxes/${theirs.mailboxId}` },
  { op: "DELETE /api/client/email/aliases/{id}", what: "their alias", path: ({ theirs }) => `/api/client/email/aliases/${theirs.aliasId}` },

  {
    op: "POST /api/client/account/configure-php",
    what: "their domain_id",
    path: () => "/api/client/account/configure-php",
    body: ({ theirs, phpVersionId }) => ({ domain_id: theirs.domainId, php_version_id: phpVersionId, is_php_fpm_enabled: true }),
  },
  {
    op: "GET /api/client/account/visitor-stats",
    what: "their domain (a log for it lies in every account's directory)",
    path: ({ theirs }) => `/api/client/account/visitor-stats?domain=${theirs.domain}`,
  },
];

// ---- seed ----

async function holdingsOf(db: Database, account: HostingAccountRecord): Promise<Holdings> {
  const [domain] = await listDomains(db, account.id);
  const record = await createDnsRecord(db, account.id, { domain_id: domain.id, name: "www", type: "A", content: "192.0.2.10", ttl: 3600 });
  const soa = (await listDnsRecords(db, account.id, domain.id)).find((r) => r.type === "SOA")!;
  const database = await createDatabase(db, account, { database_name: "linked" });
  const user = await createDatabaseUser(db, account, { username: "linked", password: "long enough" });
  await assignDatabase(db, account.id, user.id, { database_id: database.id, privileges: ["SELECT"] });
  const freeDatabase = await createDatabase(db, account, { database_name: "free" });
  const freeUser = await createDatabaseUser(db, account, { username: "free", password: "long enough" });
  const freeDomain = await createDomain(db, account.id, { domain: "free", domain_type: "subdomain", parent_domain_id: domain.id });
  const sshKey = await addSshKey(db, account.id, { name: "laptop", public_key: ed25519KeyLine() });
  const cronJob = await createCronJob(db, account.id, { schedule: "@daily", command: "php wp-cron.php", is_enabled: true });
  const mailbox = await createMailbox(db, account.id, { address: `info@${domain.domain}`, password: "long enough password", quota_mb: 100, enabled: true });
  const alias = await createAlias(db, account.id, { address: `sales@${domain.domain}`, targets: [`info@${domain.domain}`] });
  return {
    domain: domain.domain,
    domainId: domain.id,
    recordId: record.id,
    soaId: soa.id,
    databaseId: database.id,
    userId: user.id,
    freeDatabaseId: freeDatabase.id,
    freeUserId: freeUser.id,
    freeDomainId: freeDomain.id,
    sshKeyId: sshKey.id,
    cronJobId: cronJob.id,
    mailboxId: mailbox.id,
    mailDomainId: (await listMailDomains(db, account.id))[0].id,
    aliasId: alias.id,
  };
}

async function seed(db: Database) {
  const tenants = await seedTenants(db); // admin, res1 owning alice, bob alone, a key of each scope
  await createReseller(db, { username: "res2" }, seedActor);
  const carol = await createAccount(db, { username: "carol", domain: "carol.example", reseller: "res1" }, seedActor);
  const dave = await createAccount(db, { username: "dave", domain: "dave.example", reseller: "res2" }, seedActor);
  const accounts = { alice: tenants.alice, bob: tenants.bob, carol, dave };
  const ownerKeys = {
    alice: tenants.aliceKey,
    bob: tenants.bobKey,
    carol: await makeKey(db, { scope: "account", account_id: carol.id }),
    dave: await makeKey(db, { scope: "account", account_id: dave.id }),
  };
  const holdings = {} as Record<Username, Holdings>;
  for (const username of usernames) holdings[username] = await holdingsOf(db, accounts[username]);
  const php = await addPhpVersion(db, { version: "8.3" }, seedActor);
  return { ...tenants, accounts, ownerKeys, holdings, phpVersionId: php.id };
}
type Seed = Awaited<ReturnType<typeof seed>>;

// Every account's log directory holds a log of every domain, so only the ownership check
// stands between a caller and another account's visitor statistics.
const logDir = fs.mkdtempSync(path.join(os.tmpdir(), "panel-isolation-logs-"));
for (const owner of usernames) {
  for (const domain of usernames.map((name) => `${name}.example`)) {
    fs.mkdirSync(path.join(logDir, owner), { recursive: true });
    const line = `192.0.2.1 - - [01/Oct/2026:13:55:36 +0000] "GET / HTTP/1.1" 200 512 "-" "curl/8.0"\n`;
    fs.writeFileSync(path.join(logDir, owner, `${domain}.log`), line.repeat(3));
  }
}
after(() => fs.rmSync(logDir, { recursive: true, force: true }));

// ---- the matrix ----

test("the matrix covers every client operation that takes an id", () => {
  const propertiesOf = (schema: z.ZodType | undefined) =>
    schema ? Object.keys((z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as { properties?: object }).properties ?? {}) : [];
  const takesId = operations.filter(
    (operation) =>
      operation.audience === "client" &&
      (operation.path.includes("{") ||
        [...propertiesOf(operation.query), ...propertiesOf(operation.body)].some((name) => name.endsWith("_id") || name === "domain")),
  );
  assert.deepEqual(new Set(routes.map((route) => route.op)), new Set(takesId.map(endpointOf)));
});

for (const backend of testBackends()) {
  describe(`client isolation (${backend})`, () => {
    let env: TestEnvironment<Seed>;
    /** The last state read of each account: every cell compares with it. */
    const known = new Map<Username, unknown>();

    /** Everything an account holds, as its own key reads it. */
    async function readBack(username: Username) {
      const read = async (path: string) => {
        const response = await call(env.server.baseUrl, "GET", path, { credentials: env.seed.ownerKeys[username] });
        return response.status === 200 ? response.body : response.status;
      };
      const domains = (await read("/api/client/domains")) as { id: number }[];
      return {
        account: await read("/api/client/account"),
        domains,
        zones: await Promise.all(domains.map((domain) => read(`/api/client/dns-records?domain_id=${domain.id}`))),
        databases: await read("/api/client/databases"),
        databaseUsers: await read("/api/client/database-users"),
        sshKeys: await read("/api/client/ssh-keys"),
        cronJobs: await read("/api/client/cron-jobs"),
        mailDomains: await read("/api/client/email/domains"),
        mailboxes: await read("/api/client/email/mailboxes"),
        aliases: await read("/api/client/email/aliases"),
      };
    }

    async function assertUnchanged(username: Username) {
      const now = await readBack(username);
      try {
        assert.deepEqual(now, known.get(username), `${username}'s data changed`);
      } finally {
        known.set(username, now); // a failure is reported once, not by every later cell
      }
    }

    before(async () => {
      env = await createEnvironment(backend, seed, { ACCESS_LOG_DIR: logDir });
      for (const username of usernames) known.set(username, await readBack(username));
    });
    after(async () => {
      await env?.teardown();
    });

    test("the ids are real: each owner reads its own, and the linked pairs are linked", async () => {
      for (const username of usernames) {
        const state = known.get(username) as Awaited<ReturnType<typeof readBack>>;
        const held = env.seed.holdings[username];
        const owner = (path: string) => call(env.server.baseUrl, "GET", path, { credentials: env.seed.ownerKeys[username] });
        for (const path of [
          `/api/client/databases/${held.freeDatabaseId}`,
          `/api/client/database-users/${held.freeUserId}`,
          `/api/client/dns-records/${held.recordId}`,
          `/api/client/dns-records/${held.soaId}`,
          `/api/client/domains/${held.domainId}`,
          `/api/client/domains/${held.freeDomainId}`,
        ]) {
          assert.equal((await owner(path)).status, 200, `${username}: ${path}`);
        }
        assert.deepEqual(state.sshKeys.ssh_keys.map((key: { id: number }) => key.id), [held.sshKeyId]);
        const linked = await owner(`/api/client/databases/${held.databaseId}`);
        assert.deepEqual(linked.body.users.map((user: { id: number; privileges: string[] }) => [user.id, user.privileges]), [[held.userId, ["SELECT"]]]);
        assert.equal((await owner(`/api/client/account/visitor-stats?domain=${held.domain}`)).status, 200, `${username}'s own report`);
        assert.equal((state.account as { username: string }).username, username);
      }
    });

    for (const caller of callers) {
      describe(caller.name, () => {
        for (const route of routes) {
          const status = caller.refused === "account" ? 404 : (route.status ?? 404);

          test(`${status} for ${route.op} with ${route.what}; nothing changes`, async () => {
            const seed = env.seed;
            const header = caller.header?.(seed);
            const send = (theirs: Holdings, account: string | number | undefined): Promise<ApiResponse> => {
              const ids = { mine: seed.holdings.alice, theirs, phpVersionId: seed.phpVersionId };
              return call(env.server.baseUrl, route.op.split(" ")[0], route.path(ids), {
                credentials: seed[caller.key],
                account,
                body: route.body?.(ids),
              });
            };

            const response = await send(seed.holdings[caller.ids], header);
            // The control: the same request where the ids, or the account named, do not exist.
            const control =
              caller.refused === "account"
                ? await send(seed.holdings[caller.ids], typeof header === "number" ? MISSING : "nobody")
                : await send(missing, header);

            assert.equal(response.status, status, JSON.stringify(response.body));
            assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
            assert.equal(typeof response.body.error, "string");
            if (status === 422) assert.ok(response.body.errors?.[route.field!], `422 names ${route.field}`);
            assert.deepEqual(response.body, control.body, "the same answer as for something that does not exist");

            await assertUnchanged("alice");
            await assertUnchanged(caller.ids);
          });
        }
      });
    }

    // Beside the matrix: the same refusals where the foreign thing is named, not numbered (an
    // X-Hosting-Account id too large for any account: tests/api/authentication.test.ts).

    test("422 for a domain named inside another account's domain; its own domains are not affected", async () => {
      const aliceDomainId = env.seed.holdings.alice.domainId;
      const asAlice = (key: "aliceKey" | "resellerKey", body: object) =>
        call(env.server.baseUrl, "POST", "/api/client/domains", { credentials: env.seed[key], account: "alice", body });
      for (const [key, body] of [
        ["aliceKey", { domain: "mail.bob.example", domain_type: "domain" }],
        ["aliceKey", { domain: "Deep.WWW.bob.example.", domain_type: "domain" }],
        ["aliceKey", { domain: "www.bob.example", domain_type: "parked", parked_on_domain_id: aliceDomainId }],
        ["resellerKey", { domain: "shop.carol.example", domain_type: "domain" }],
      ] as const) {
        const response = await asAlice(key, body);
        assert.equal(response.status, 422, `${body.domain}: ${JSON.stringify(response.body)}`);
        assert.ok(response.body.errors?.domain, "names the domain field");
      }
      await assertUnchanged("alice");
      await assertUnchanged("bob");
      await assertUnchanged("carol");

      assert.equal((await asAlice("aliceKey", { domain: "blog.alice.example", domain_type: "domain" })).status, 201, "inside her own");
      const bob = (body: object) => call(env.server.baseUrl, "POST", "/api/client/domains", { credentials: env.seed.bobKey, body });
      assert.equal((await bob({ domain: "mail.bob.example", domain_type: "domain" })).status, 201, "still free for bob");
    });
  });
}
