import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { and, eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { accountMoves, dnsRecords, domains, nodeJobs, nodes } from "@/db/schema";
import { createAccount, getAccount } from "@/lib/accounts/service";
import type { Job } from "@/lib/agent/protocol";
import type { Actor } from "@/lib/audit/service";
import { createDnsRecordBodySchema } from "@/lib/dns/schemas";
import { createDnsRecord, updateDnsRecord } from "@/lib/dns/service";
import { advanceMoves } from "@/lib/moves/driver";
import { drainNodeSchema, startMoveSchema } from "@/lib/moves/schemas";
import { cancelMove, drainNode, startMove } from "@/lib/moves/service";
import { testBackends } from "../support/database";
import { beatStandInNodes, useStandInNodes, withStandInNodes } from "../support/stand-in-agent";

// Issue 37, item 1 — what a move stores about DNS, with stand-in nodes (tests/support/stand-in-agent.ts):
// a queued move lowers the account's records that name its node to MOVE_DNS_TTL (60 s) and keeps
// their TTLs; the switch waits for the caches of the old TTL (the move says so, no attempt
// counted, the source not suspended); the source forwards until twice the old TTL has passed;
// the move's end — done or cancelled — gives the TTLs back, except to a record the customer
// changed meanwhile. Times are moved in the move's row here (an hour's TTL is not waited for);
// the real wait is tests/api/move-forward.test.ts's.

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "panel-move-dns-"));
const zonesDir = path.join(scratch, "data", "zones");
Object.assign(process.env, {
  DATA_DIR: path.join(scratch, "data"),
  ZONES_DIR: zonesDir,
  MOVE_REPOSITORY: path.join(scratch, "moves"),
  NATS_SEED_FILE: path.join(scratch, "nats-panel.nk"),
  NATS_INSECURE: "1",
});
for (const name of ["DATABASE_URL", "MYSQL_PROVISION_URL", "WEB_SERVER", "SYSTEM_USERS", "SSH_SERVER", "NATS_AUTH_FILE", "NATS_RELOAD_COMMAND", "MOVE_DNS_TTL"]) delete process.env[name];

const admin: Actor = { type: "cli" };
const [N2, N3] = ["192.0.2.2", "192.0.2.3"];

const agent = useStandInNodes(scratch);
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

for (const backend of testBackends()) {
  describe(`a move and the DNS caches (${backend})`, () => {
    const tag = backend.slice(0, 2);

    const withNodes = (run: (db: Database) => Promise<void>) => withStandInNodes(backend, { n2: N2, n3: N3 }, run);

    const beat = (db: Database) => beatStandInNodes(db, ["n2", "n3"]);
    const moveOf = async (db: Database, accountId: number) => (await db.select().from(accountMoves).where(eq(accountMoves.accountId, accountId))).at(-1)!;
    const ttlsOf = async (db: Database, domainId: number) =>
      Object.fromEntries((await db.select().from(dnsRecords).where(and(eq(dnsRecords.domainId, domainId), eq(dnsRecords.type, "A")))).map((record) => [record.name, record.ttl]));
    const serialOf = async (db: Database, domainId: number) => (await db.select({ serial: domains.soaSerial }).from(domains).where(eq(domains.id, domainId)))[0].serial;

    /** An account on n2 whose zone has A records: @ (3600 s) and www (600 s) naming n2, mail naming another address, low naming n2 at 60 s already. */
    async function accountOnN2(db: Database, username: string) {
      await beat(db);
      const account = await createAccount(db, { username, domain: `${username}.example`, node: "n2" }, admin);
      const [domain] = await db.select().from(domains).where(eq(domains.accountId, account.id));
      const add = (name: string, content: string, ttl: number) => createDnsRecord(db, account.id, createDnsRecordBodySchema.parse({ domain_id: domain.id, name, type: "A", content, ttl }));
      const www = await add("www", N2, 600);
      await add("mail", "198.51.100.7", 3600);
      await add("low", N2, 60);
      return { id: account.id, domainId: domain.id, domain: domain.domain, wwwId: www.id };
    }

    /** Every job the stand-in agent answers from now on, by node. */
    function recordJobs(): { node: string; job: Job }[] {
      const seen: { node: string; job: Job }[] = [];
      agent().refuseWhen((node, job) => {
        seen.push({ node, job });
        return null;
      });
      return seen;
    }

    test("a queued move lowers the account's A records naming its node to 60 s, keeps their TTLs and writes the zone; cancelled while queued it gives them back, but not to a record the customer changed", () =>
      withNodes(async (db) => {
        const account = await accountOnN2(db, `dq${tag}`);
        const serialBefore = await serialOf(db, account.domainId);
        const queuedAt = Date.now();
        await startMove(db, account.id, startMoveSchema.parse({ node: "n3" }), admin);

        assert.deepEqual(await ttlsOf(db, account.domainId), { "@": 60, www: 60, mail: 3600, low: 60 });
        const move = await moveOf(db, account.id);
        const [apex] = await db.select().from(dnsRecords).where(and(eq(dnsRecords.domainId, account.domainId), eq(dnsRecords.name, "@"), eq(dnsRecords.type, "A")));
        assert.deepEqual(move.recordTtls, { [String(apex.id)]: 3600, [String(account.wwwId)]: 600 });
        const clearIn = move.cachesClearAt!.getTime() - queuedAt;
        assert.ok(clearIn >= 3600_000 - 1000 && clearIn <= 3600_000 + 5000, `caches clear in ${clearIn} ms`);
        const serial = await serialOf(db, account.domainId);
        assert.ok(serial > serialBefore);
        const zoneFile = fs.readFileSync(path.join(zonesDir, `${account.domain}.zone`), "utf8");
        assert.match(zoneFile, new RegExp(`^@\\t60\\tIN\\tA\\t${N2.replaceAll(".", "\\.")}$`, "m"));
        assert.match(zoneFile, new RegExp(` ${serial} `));

        // The customer sets www's TTL meanwhile: theirs stays.
        await updateDnsRecord(db, account.id, account.wwwId, { ttl: 300 });
        const cancelled = await cancelMove(db, account.id, admin);
        assert.equal(cancelled.move.step, "cancelled");
        assert.deepEqual(await ttlsOf(db, account.domainId), { "@": 3600, www: 300, mail: 3600, low: 60 });
        assert.ok((await serialOf(db, account.domainId)) > serial);
        assert.match(fs.readFileSync(path.join(zonesDir, `${account.domain}.zone`), "utf8"), /^@\t3600\tIN\tA\t/m);
      }));

    test("the switch waits for the DNS caches (the move says so, no attempt, the source not suspended), then the source forwards for twice the old TTL, and the move's end gives the TTLs back", () =>
      withNodes(async (db) => {
        const account = await accountOnN2(db, `dw${tag}`);
        await startMove(db, account.id, startMoveSchema.parse({ node: "n3" }), admin);
        const jobs = recordJobs();
        await beat(db);
        await advanceMoves(db, "driver");

        let move = await moveOf(db, account.id);
        assert.deepEqual({ state: move.state, error: move.error, attempts: move.attempts }, { state: "switching", error: null, attempts: 0 });
        let shown = (await getAccount(db, account.id)).move!;
        assert.match(shown.waiting ?? "", /^waiting for DNS caches, (3600|359\d) s left$/);
        assert.equal(shown.error, null);
        const suspendsSource = () => jobs.some(({ node, job }) => node === "n2" && job.op === "account.ensure" && (job.args as { state: { account: { suspended: boolean } } }).state.account.suspended);
        assert.equal(suspendsSource(), false, "the source was suspended before the caches cleared");
        // A second tick changes nothing either.
        await advanceMoves(db, "driver");
        assert.equal((await moveOf(db, account.id)).state, "switching");
        assert.equal(suspendsSource(), false);

        // The caches' time has passed: the switch, the cleaning, and the source forwards.
        await db.update(accountMoves).set({ cachesClearAt: new Date(Date.now() - 1000) }).where(eq(accountMoves.id, move.id));
        await beat(db);
        await advanceMoves(db, "driver");
        move = await moveOf(db, account.id);
        assert.equal(move.state, "forwarding", JSON.stringify(move.error));
        assert.equal(suspendsSource(), true);
        assert.equal(move.forwardUntil!.getTime() - move.switchedAt!.getTime(), 2 * 3600_000);
        shown = (await getAccount(db, account.id)).move!;
        assert.match(shown.waiting ?? "", /^the source forwards to the target, \d+ s left$/);
        // The source forwards before the target serves (its answers are the target's from then on),
        // and the cleaning writes the forwards again with the end the commit set.
        const forwards = jobs.filter(({ node, job }) => node === "n2" && job.op === "forward.apply");
        const targetServes = jobs.findIndex(({ node, job }) => node === "n3" && job.op === "account.ensure" && !(job.args as { state: { account: { suspended: boolean } } }).state.account.suspended);
        assert.equal(forwards.length, 2, JSON.stringify(forwards));
        assert.ok(jobs.indexOf(forwards[0]) < targetServes, "the source forwarded before the target served");
        assert.ok(Date.parse((forwards[0].job.args as { until: string }).until) <= move.forwardUntil!.getTime());
        assert.deepEqual(forwards[1].job.args, {
          target: N3,
          until: move.forwardUntil!.toISOString(),
          sites: [{ domain: account.domain, server_names: [account.domain, `www.${account.domain}`] }],
        });
        // Everything else left n2; its sites' files (the forwards now) and its certificates stay until the forward's end.
        const removal = jobs.filter(({ node }) => node === "n2").map(({ job }) => job.op);
        for (const op of ["account.remove-logins", "account.remove-crontab", "databases.remove", "account.remove-home"]) assert.ok(removal.includes(op as never), `${op} was not sent to n2`);
        assert.deepEqual(jobs.find(({ node, job }) => node === "n2" && job.op === "sites.remove")?.job.args, { username: `dw${tag}`, domains: [], phpVersions: [] });
        const certificatesRemoved = () => jobs.filter(({ node, job }) => node === "n2" && job.op === "certificates.remove" && (job.args as { domains: string[] }).domains.length > 0);
        assert.deepEqual(certificatesRemoved(), []);
        // The records point to n3, still at 60 s.
        const records = await db.select().from(dnsRecords).where(and(eq(dnsRecords.domainId, account.domainId), eq(dnsRecords.type, "A")));
        assert.deepEqual(records.filter((record) => record.name === "@" || record.name === "www").map((record) => [record.content, record.ttl]), [[N3, 60], [N3, 60]]);

        // The forward's time has passed: its end, done, the TTLs back.
        await db.update(accountMoves).set({ forwardUntil: new Date(Date.now() - 1000) }).where(eq(accountMoves.id, move.id));
        await beat(db);
        await advanceMoves(db, "driver");
        move = await moveOf(db, account.id);
        assert.deepEqual({ state: move.state, error: move.error }, { state: "done", error: null });
        assert.equal((await getAccount(db, account.id)).move!.waiting, null);
        assert.deepEqual(jobs.find(({ node, job }) => node === "n2" && job.op === "forward.remove")?.job.args, { domains: [account.domain] });
        assert.deepEqual(certificatesRemoved().map(({ job }) => job.args), [{ domains: [account.domain] }]);
        assert.deepEqual(await ttlsOf(db, account.domainId), { "@": 3600, www: 600, mail: 3600, low: 60 });
      }));

    test("a forward's end whose source does not answer is queued for it, and the move ends done", () =>
      withNodes(async (db) => {
        const account = await accountOnN2(db, `ds${tag}`);
        await startMove(db, account.id, startMoveSchema.parse({ node: "n3" }), admin);
        await db.update(accountMoves).set({ cachesClearAt: new Date(Date.now() - 1000) }).where(eq(accountMoves.accountId, account.id));
        await beat(db);
        await advanceMoves(db, "driver");
        const move = await moveOf(db, account.id);
        assert.equal(move.state, "forwarding");
        // n2 stops beating (its last heartbeat a minute old), and the forward's time is over.
        await db.update(nodes).set({ lastHeartbeatAt: new Date(Date.now() - 60_000) }).where(eq(nodes.name, "n2"));
        await db.update(accountMoves).set({ forwardUntil: new Date(Date.now() - 1000) }).where(eq(accountMoves.id, move.id));
        await advanceMoves(db, "driver");
        assert.equal((await moveOf(db, account.id)).state, "done");
        const [n2] = await db.select().from(nodes).where(eq(nodes.name, "n2"));
        const queued = await db.select().from(nodeJobs).where(and(eq(nodeJobs.nodeId, n2.id), eq(nodeJobs.kind, "move.forward-end")));
        assert.equal(queued.length, 1);
        assert.deepEqual((queued[0].payload as Job).args, {
          steps: [
            { op: "forward.remove", args: { domains: [account.domain] } },
            { op: "certificates.remove", args: { domains: [account.domain] } },
          ],
        });
        assert.equal((await ttlsOf(db, account.domainId))["@"], 3600);
      }));

    test("a drain lowers every account's records at once, and a move that only forwards does not hold back the next", () =>
      withNodes(async (db) => {
        const first = await accountOnN2(db, `da${tag}`);
        const second = await accountOnN2(db, `db${tag}`);
        const [n2] = await db.select().from(nodes).where(eq(nodes.name, "n2"));
        await drainNode(db, n2.id, drainNodeSchema.parse({ to: "n3" }), admin);
        const [one, two] = [await moveOf(db, first.id), await moveOf(db, second.id)];
        assert.equal(one.cachesClearAt!.getTime() - two.cachesClearAt!.getTime() <= 0, true);
        assert.ok(Math.abs(one.cachesClearAt!.getTime() - two.cachesClearAt!.getTime()) < 1000);
        for (const account of [first, second]) assert.equal((await ttlsOf(db, account.domainId))["@"], 60);

        await db.update(accountMoves).set({ cachesClearAt: new Date(Date.now() - 1000) }).where(eq(accountMoves.sourceNodeId, n2.id));
        await beat(db);
        await advanceMoves(db, "driver");
        assert.equal((await moveOf(db, first.id)).state, "forwarding");
        // The next account's move has begun (the tick after), and with the caches clear it switches at once.
        await beat(db);
        await advanceMoves(db, "driver");
        assert.equal((await moveOf(db, second.id)).state, "forwarding");
      }));
  });
}
