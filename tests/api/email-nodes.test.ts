import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { accountMoves } from "@/db/schema";
import { createPlan } from "@/lib/plans/service";
import { machineBackends } from "../support/database";
import { dkimSignatures, verifyDkim } from "../support/dkim";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { startNats, type TestNats } from "../support/nats";
import { makeKey, seedActor } from "../support/seed";
import { linkNodes, startTestNode, type TestNode } from "../support/test-node";
import { waitFor } from "../support/wait";

// Mail on hosting nodes (docs/email.md "Moves", docs/nodes.md "Moving accounts"): two nodes, each
// a machine of its own on this one (tests/support/node-host.ts) running its own Postfix, Dovecot
// and rspamd on its own address and the standard ports, its agent writing their tables from the
// state the panel sends. An account's mailbox there receives over SMTP, is read over IMAPS and
// signs what it submits with the node's DKIM key, verified against the panel's zone; moved to the
// other node, the same mailbox (its messages, its password) is read there, a sender that still
// has the source in its cache reaches it through the source's relay, the target signs with a key
// of its own, the zone's MX host and A records name the target, and nothing of the account's
// mail is left on the source. The node's agent is the policy service its Postfix asks: over the
// plan's hourly limit a message is refused, and the panel flags the account from the node's word.
// Real clients only: swaks for SMTP, curl for IMAPS. One backend: what is tested is the machines.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-email-nodes-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** How long a change waits for its node here. */
const JOB_TIMEOUT_S = 10;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(program: string, args: string[]): Promise<Run> {
  return new Promise((resolve) =>
    execFile(program, args, { timeout: 60_000 }, (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout: String(stdout), stderr: String(stderr) })),
  );
}

/** A message to `to` from outside, delivered to `node`'s port 25 as another mail server would. */
async function deliver(node: TestNode, to: string, subject: string): Promise<void> {
  const sent = await run("swaks", ["--server", `${node.host.address}:25`, "--to", to, "--from", "someone@elsewhere.test", "--header", `Subject: ${subject}`, "--body", `the body of ${subject}`]);
  assert.equal(sent.code, 0, `${sent.stdout}${sent.stderr}`);
}

/** swaks submitting a message on `node`'s port 587 (STARTTLS, logged in as `address`), from and to `address`: its transcript. */
const submission = (node: TestNode, address: string, password: string, subject: string) =>
  run("swaks", [
    "--server", `${node.host.address}:587`, "--tls", "--auth", "PLAIN", "--auth-user", address, "--auth-password", password,
    "--to", address, "--from", address, "--header", `Subject: ${subject}`, "--body", `the body of ${subject}`,
  ]);

/** A message submitted (submission) and taken. */
async function submit(node: TestNode, address: string, password: string, subject: string): Promise<void> {
  const sent = await submission(node, address, password, subject);
  assert.equal(sent.code, 0, `${sent.stdout}${sent.stderr}`);
}

/** curl on `node`'s IMAPS (its certificate is its own, self-signed: not checked here). */
const imaps = (node: TestNode, address: string, password: string, suffix: string, command?: string) =>
  run("curl", ["--silent", "--insecure", "--max-time", "10", "--user", `${address}:${password}`, `imaps://${node.host.address}:993/INBOX${suffix}`, ...(command ? ["--request", command] : [])]);

/** The UIDs of the messages whose subject holds `token` in `address`'s INBOX on `node`; null when the login is refused. */
async function search(node: TestNode, address: string, password: string, token: string): Promise<number[] | null> {
  const result = await imaps(node, address, password, "", `UID SEARCH SUBJECT "${token}"`);
  if (result.code !== 0) return null;
  const line = result.stdout.split("\n").find((text) => text.startsWith("* SEARCH")) ?? "";
  return line.replace("* SEARCH", "").trim().split(/\s+/).filter(Boolean).map(Number);
}

/** The message with `token` in its subject, once it is in `address`'s INBOX on `node`. */
async function readDelivered(node: TestNode, address: string, password: string, token: string): Promise<string> {
  const uids = await waitFor(`${token} in ${address}'s INBOX on ${node.name}\n${node.mail!.logs().slice(-3000)}`, async () => {
    const found = await search(node, address, password, token);
    return found && found.length > 0 ? found : null;
  }, 20_000);
  const message = await imaps(node, address, password, `;UID=${uids[0]}`);
  assert.equal(message.code, 0, message.stderr);
  return message.stdout;
}

/** The plan of the account whose sending limit is reached on a node. */
const HOURLY_LIMIT = 3;

const seed = async (db: Database) => ({
  adminKey: await makeKey(db, { scope: "admin" }),
  limited: await createPlan(db, { name: "limited", mail_per_hour: HOURLY_LIMIT, mail_per_day: 100 }, seedActor),
});

for (const backend of machineBackends("postgres")) {
  describe(`mail on nodes (${backend})`, () => {
    let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
    let nats: TestNats;
    const nodes: TestNode[] = [];
    const [n1, n2] = [() => nodes[0], () => nodes[1]];
    const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
    const username = "mailer";
    const domain = "mailer.example";
    const address = `info@${domain}`;
    const password = "a mailbox password";
    let accountId = 0;
    const client = () => apiClient(env.server.baseUrl, env.seed.adminKey, accountId);

    before(async () => {
      nats = await startNats(path.join(root, "nats"), "0.0.0.0");
      env = await createEnvironment(backend, seed, { ...nats.env, NODE_JOB_TIMEOUT_S: String(JOB_TIMEOUT_S), MOVE_REPOSITORY: path.join(root, "moves") });
      for (const name of ["n1", "n2"]) nodes.push(await startTestNode(name, { panelPort: env.server.port, admin: env.seed.adminKey, nats, mail: true }));
      linkNodes(nodes[0], nodes[1]);
    });

    after(async () => {
      for (const node of nodes) await node.stop();
      await env?.teardown();
      await nats?.stop();
    });

    /** The zone's records of the account's domain: `name type` → contents. */
    async function zone(): Promise<Map<string, string[]>> {
      const [ownDomain] = (await client().get("/api/client/domains")).body as { id: number }[];
      const records = new Map<string, string[]>();
      for (const record of (await client().get(`/api/client/dns-records?domain_id=${ownDomain.id}`)).body as { name: string; type: string; content: string; priority: number | null }[]) {
        const key = `${record.name} ${record.type}`;
        records.set(key, [...(records.get(key) ?? []), record.type === "MX" ? `${record.priority} ${record.content}` : record.content]);
      }
      return records;
    }

    /** The zone's TXT records by full name, as a receiving server's resolver gives them. */
    async function txtRecords(): Promise<Map<string, string>> {
      const records = new Map<string, string>();
      for (const [key, contents] of await zone()) {
        const [name, type] = key.split(" ");
        if (type === "TXT") records.set(name === "@" ? domain : `${name}.${domain}`, contents[0]);
      }
      return records;
    }

    /** The selector the mail domain signs with now. */
    async function signingSelector(): Promise<string> {
      const [mailDomain] = (await client().get("/api/client/email/domains")).body as { dkim: { selector: string | null } }[];
      assert.ok(mailDomain.dkim.selector);
      return mailDomain.dkim.selector;
    }

    /** What node `node`'s mail tables name of the domain. */
    const tablesNaming = (node: TestNode) =>
      fs
        .readdirSync(node.mail!.env.MAIL_MAPS_DIR)
        .filter((name) => !name.endsWith(".db") && fs.statSync(path.join(node.mail!.env.MAIL_MAPS_DIR, name)).isFile())
        .filter((name) => fs.readFileSync(path.join(node.mail!.env.MAIL_MAPS_DIR, name), "utf8").includes(domain));

    test("a mailbox on a node receives on its port 25, is read over its IMAPS, and what it submits is signed with the node's key, verified against the zone", async () => {
      const created = await admin().post("/api/admin/accounts", { username, domain, node: "n1", plan: "default" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      accountId = created.body.id;
      // Its A records at the move's short TTL already: the move below waits for no DNS cache (tests/api/move-dns.test.ts has that wait).
      const mailbox = await client().post("/api/client/email/mailboxes", { address, password, quota_mb: 50 });
      assert.equal(mailbox.status, 201, JSON.stringify(mailbox.body));
      const [ownDomain] = (await client().get("/api/client/domains")).body as { id: number }[];
      for (const record of (await client().get(`/api/client/dns-records?domain_id=${ownDomain.id}`)).body as { id: number; type: string; ttl: number }[]) {
        if (record.type === "A" && record.ttl > 60) assert.equal((await client().put(`/api/client/dns-records/${record.id}`, { ttl: 60 })).status, 200);
      }

      await deliver(n1(), address, "first-on-n1");
      assert.match(await readDelivered(n1(), address, password, "first-on-n1"), /the body of first-on-n1/);
      assert.equal(await search(n1(), address, "not the password", "first-on-n1"), null, "a wrong password is refused");

      await submit(n1(), address, password, "signed-on-n1");
      const signed = await readDelivered(n1(), address, password, "signed-on-n1");
      const selector = await signingSelector();
      assert.deepEqual(dkimSignatures(signed), [{ d: domain, s: selector }], signed);
      assert.equal(verifyDkim(signed, await txtRecords()), true);

      const records = await zone();
      assert.deepEqual(records.get("@ MX"), [`10 mail.${domain}`]);
      assert.deepEqual(records.get("mail A"), [n1().host.address]);
    });

    test("moved to the other node, the mailbox is read there with its messages and password, a sender still caching the source reaches it through the source's relay, the target signs with its own key, and nothing of its mail is left on the source", async () => {
      assert.ok(accountId, "the first test made the account");
      const sourceSelector = await signingSelector();
      const started = await admin().post(`/api/admin/accounts/${accountId}/move`, { node: "n2" });
      assert.equal(started.status, 202, JSON.stringify(started.body));
      const forwarding = await waitFor("the move to reach its forward", async () => {
        const move = (await admin().get(`/api/admin/accounts/${accountId}`)).body.move;
        assert.notEqual(move?.state, "cancelled", JSON.stringify(move));
        return move?.step === "forwarding" && move;
      }, 240_000);
      assert.equal(forwarding.target, "n2");

      // The target serves the mailbox: what the source received, under the same password.
      assert.match(await readDelivered(n2(), address, password, "first-on-n1"), /the body of first-on-n1/);
      assert.equal(await search(n1(), address, password, "first-on-n1"), null, "the source no longer lets the mailbox log in");

      // A sender that still has the source's address: the source relays to the target.
      await deliver(n1(), address, "relayed-by-n1");
      assert.match(await readDelivered(n2(), address, password, "relayed-by-n1"), /the body of relayed-by-n1/);
      await deliver(n2(), address, "straight-to-n2");
      await readDelivered(n2(), address, password, "straight-to-n2");

      // The target signs with a key of its own, published in the zone.
      const targetSelector = await signingSelector();
      assert.notEqual(targetSelector, sourceSelector);
      await submit(n2(), address, password, "signed-on-n2");
      const signed = await readDelivered(n2(), address, password, "signed-on-n2");
      assert.deepEqual(dkimSignatures(signed), [{ d: domain, s: targetSelector }], signed);
      assert.equal(verifyDkim(signed, await txtRecords()), true);

      const records = await zone();
      assert.deepEqual(records.get("@ MX"), [`10 mail.${domain}`]);
      assert.deepEqual(records.get("mail A"), [n2().host.address]);
      assert.deepEqual(records.get("@ A"), [n2().host.address]);

      // The forward ends now rather than in two minutes; the cleaning step takes the account off the source.
      await env.db!.update(accountMoves).set({ forwardUntil: new Date(Date.now() - 1000) }).where(eq(accountMoves.state, "forwarding"));
      const done = await waitFor("the move to end", async () => {
        const move = (await admin().get(`/api/admin/accounts/${accountId}`)).body.move;
        return (move?.state === "done" || move?.state === "cancelled") && move;
      }, 120_000);
      assert.equal(done.state, "done", JSON.stringify(done));
      assert.equal(fs.existsSync(path.join(n1().host.root, "home", username)), false, "the home, and its maildirs, are gone from the source");
      assert.deepEqual(tablesNaming(n1()), [], "the source's mail tables name the domain no more");
      assert.deepEqual(fs.readdirSync(path.join(n1().mail!.env.MAIL_MAPS_DIR, "dkim")).filter((name) => name.startsWith(`${domain}.`)), [], "no DKIM key of the domain is left on the source");
      assert.deepEqual(tablesNaming(n2()).sort(), ["dkim_selectors", "passwd", "sender_logins", "virtual_aliases", "virtual_domains", "virtual_mailboxes"]);
      await deliver(n2(), address, "after-the-move");
      await readDelivered(n2(), address, password, "after-the-move");
    });

    test(`a node's policy service counts what its accounts send: over the plan's ${HOURLY_LIMIT} per hour a message is refused with 450 4.7.1, the panel flags the account from the node's word, and the admin lifts it`, async () => {
      const created = await admin().post("/api/admin/accounts", { username: "sender", domain: "sender.example", node: "n2", plan: "limited" });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const sender = apiClient(env.server.baseUrl, env.seed.adminKey, created.body.id);
      const from = "news@sender.example";
      assert.equal((await sender.post("/api/client/email/mailboxes", { address: from, password, quota_mb: 10 })).status, 201);
      for (let sent = 0; sent < HOURLY_LIMIT; sent++) await submit(n2(), from, password, `within-${sent}`);
      const refused = await submission(n2(), from, password, "over");
      assert.notEqual(refused.code, 0);
      assert.match(refused.stdout, /<~\* 450 4\.7\.1 .*sending limit of 3 messages per hour/, refused.stdout);
      const account = `/api/admin/accounts/${created.body.id}`;
      const flagged = await waitFor("the node's word to flag the account", async () => {
        const mail = (await admin().get(account)).body.mail;
        return mail.flagged && mail;
      }, 20_000);
      assert.equal(flagged.sent_last_hour, HOURLY_LIMIT, "the panel reads the node's counts");
      assert.equal((await admin().get(`/api/admin/accounts/${accountId}`)).body.mail.flagged, false, "another account of the node is not flagged");
      assert.equal((await admin().post(`${account}/mail/unflag`)).status, 200);
      assert.equal((await admin().get(account)).body.mail.flagged, false);
    });
  });
}
