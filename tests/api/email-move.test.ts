import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { and, asc, eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { accountMoves, dnsRecords, domains, mailDkimKeys, mailDomains } from "@/db/schema";
import { createAccount } from "@/lib/accounts/service";
import type { Job } from "@/lib/agent/protocol";
import type { Actor } from "@/lib/audit/service";
import { dkimRecordName, moveDkimSelector } from "@/lib/email/dkim";
import { createMailbox, createMailDomain } from "@/lib/email/service";
import { advanceMoves } from "@/lib/moves/driver";
import { startMoveSchema } from "@/lib/moves/schemas";
import { cancelMove, startMove } from "@/lib/moves/service";
import { testBackends } from "../support/database";
import { beatStandInNodes, useStandInNodes, withStandInNodes } from "../support/stand-in-agent";

// Mail on a move (docs/email.md "Backups, restores and moves"), with stand-in nodes
// (tests/support/stand-in-agent.ts): what the panel asks of each node and keeps in its records.
// The target makes a DKIM key of its own, published in the zone in the move's first step while the
// source still signs; the target serves with it from its first moment, and the switch makes it the
// signing key and retires the old one; the passes carry HOME/mail; the target resyncs and recounts
// the mailboxes; a cancelled move takes its key's record out again. Postfix and Dovecot inside a
// namespace node are not run here (docs/email.md "Not there yet").

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "panel-email-move-"));
const zonesDir = path.join(scratch, "data", "zones");
Object.assign(process.env, {
  DATA_DIR: path.join(scratch, "data"),
  ZONES_DIR: zonesDir,
  MOVE_REPOSITORY: path.join(scratch, "moves"),
  NATS_SEED_FILE: path.join(scratch, "nats-panel.nk"),
  NATS_INSECURE: "1",
});
for (const name of ["DATABASE_URL", "MYSQL_PROVISION_URL", "WEB_SERVER", "SYSTEM_USERS", "SSH_SERVER", "NATS_AUTH_FILE", "NATS_RELOAD_COMMAND", "MOVE_DNS_TTL", "MAIL_SERVER"]) delete process.env[name];

const admin: Actor = { type: "cli" };

const agent = useStandInNodes(scratch);
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

type EnsureArgs = { state: { account: { suspended: boolean }; mail?: { dkim?: { domain: string; selector: string }[] } } };

for (const backend of testBackends()) {
  describe(`mail on a move (${backend})`, () => {
    const tag = backend.slice(0, 2);

    const withNodes = (run: (db: Database) => Promise<void>) => withStandInNodes(backend, { n2: "192.0.2.2", n3: "192.0.2.3" }, run);

    const beat = (db: Database) => beatStandInNodes(db, ["n2", "n3"]);
    const moveOf = async (db: Database, accountId: number) => (await db.select().from(accountMoves).where(eq(accountMoves.accountId, accountId))).at(-1)!;

    /** Every job the stand-in agent answers from now on, by node. */
    function recordJobs(): { node: string; job: Job }[] {
      const seen: { node: string; job: Job }[] = [];
      agent().refuseWhen((node, job) => {
        seen.push({ node, job });
        return null;
      });
      return seen;
    }

    /** An account on n2 with a mail domain (its key made on n2, signing) and a mailbox. */
    async function mailAccountOnN2(db: Database, username: string) {
      await beat(db);
      const account = await createAccount(db, { username, domain: `${username}.example`, node: "n2" }, admin);
      const mailDomain = await createMailDomain(db, account.id, { domain: `${username}.example` });
      await createMailbox(db, account.id, { address: `info@${username}.example`, password: "a mailbox password", quota_mb: 10, enabled: true });
      const [domain] = await db.select().from(domains).where(eq(domains.accountId, account.id));
      return { id: account.id, domain: domain.domain, domainId: domain.id, mailDomainId: mailDomain.id, oldSelector: mailDomain.dkim.selector! };
    }

    const keysOf = async (db: Database, mailDomainId: number) =>
      db.select().from(mailDkimKeys).where(eq(mailDkimKeys.mailDomainId, mailDomainId)).orderBy(asc(mailDkimKeys.id));
    const dkimRecords = async (db: Database, domainId: number) =>
      (await db.select({ name: dnsRecords.name }).from(dnsRecords).where(and(eq(dnsRecords.domainId, domainId), eq(dnsRecords.type, "TXT")))).map((row) => row.name).filter((name) => name.endsWith("._domainkey"));

    test("the target's own DKIM key is published while the source signs, serves from the target's first moment, and signs from the switch; the passes carry HOME/mail; the target resyncs", () =>
      // Fails on the code before this: the target got the source's selector (whose key it has not)
      // and served the domain unsigned, and no pass named `mail`.
      withNodes(async (db) => {
        const account = await mailAccountOnN2(db, `em${tag}`);
        await startMove(db, account.id, startMoveSchema.parse({ node: "n3" }), admin);
        const move = await moveOf(db, account.id);
        const selector = moveDkimSelector(move, account.domain);
        const jobs = recordJobs();
        await beat(db);
        await advanceMoves(db, "driver");
        assert.equal((await moveOf(db, account.id)).state, "switching");

        // Preparing: the key made on n3 (never on n2), published, not signing; the old one signs.
        const made = jobs.filter(({ job }) => job.op === "mail.dkim-key");
        assert.deepEqual(made.map(({ node, job }) => [node, job.args]), [["n3", { domain: account.domain, selector }]]);
        let keys = await keysOf(db, account.mailDomainId);
        assert.deepEqual(keys.map((key) => [key.selector, key.state]), [[account.oldSelector, "signing"], [selector, "published"]]);
        assert.deepEqual((await dkimRecords(db, account.domainId)).sort(), [dkimRecordName(account.oldSelector), dkimRecordName(selector)].sort());
        assert.match(fs.readFileSync(path.join(zonesDir, `${account.domain}.zone`), "utf8"), new RegExp(`^${selector}\\._domainkey\\t`, "m"));

        // The DNS caches' wait is over: the switch, the cleaning, and the source forwards.
        jobs.length = 0;
        await db.update(accountMoves).set({ cachesClearAt: new Date(Date.now() - 1000) }).where(eq(accountMoves.id, move.id));
        await beat(db);
        await advanceMoves(db, "driver");
        assert.equal((await moveOf(db, account.id)).state, "forwarding", JSON.stringify((await moveOf(db, account.id)).error));

        // The passes name HOME/mail beside the site folders.
        for (const op of ["move.snapshot", "move.restore"]) {
          const pass = jobs.find(({ job }) => job.op === op);
          assert.ok((pass?.job.args as { folders: string[] }).folders.includes("mail"), `${op}: ${JSON.stringify(pass?.job.args)}`);
        }
        // The target serves with its own key from its first moment (unsuspended ensure), never the source's.
        const serving = jobs.filter(({ node, job }) => node === "n3" && job.op === "account.ensure" && !(job.args as EnsureArgs).state.account.suspended);
        assert.ok(serving.length >= 1);
        for (const { job } of serving) assert.deepEqual((job.args as EnsureArgs).state.mail?.dkim, [{ domain: account.domain, selector }]);
        // The switch made it the signing key; the old one retired with its record kept.
        keys = await keysOf(db, account.mailDomainId);
        assert.deepEqual(keys.map((key) => [key.selector, key.state]), [[account.oldSelector, "retired"], [selector, "signing"]]);
        assert.ok(keys[0].retiredAt);
        assert.equal((await dkimRecords(db, account.domainId)).length, 2);
        // The maildirs came as files: Dovecot resyncs and recounts them on the target.
        const resync = jobs.find(({ node, job }) => node === "n3" && job.op === "mail.resync");
        assert.deepEqual(resync?.job.args, { username: `em${tag}`, mailboxes: [{ localPart: "info", domain: account.domain }] });
        // The source's mail is taken off its tables.
        assert.ok(jobs.some(({ node, job }) => node === "n2" && job.op === "mail.remove"));
        assert.equal(jobs.filter(({ job }) => job.op === "mail.dkim-key").length, 0, "no second key");
      }));

    test("a cancelled move takes the key it published out of the zone; the source's key signs on", () =>
      withNodes(async (db) => {
        const account = await mailAccountOnN2(db, `ec${tag}`);
        await startMove(db, account.id, startMoveSchema.parse({ node: "n3" }), admin);
        await beat(db);
        await advanceMoves(db, "driver");
        assert.equal((await moveOf(db, account.id)).state, "switching");
        assert.equal((await keysOf(db, account.mailDomainId)).length, 2);
        await cancelMove(db, account.id, admin);
        await beat(db);
        await advanceMoves(db, "driver");
        assert.equal((await moveOf(db, account.id)).state, "cancelled");
        const keys = await keysOf(db, account.mailDomainId);
        assert.deepEqual(keys.map((key) => [key.selector, key.state]), [[account.oldSelector, "signing"]]);
        assert.deepEqual(await dkimRecords(db, account.domainId), [dkimRecordName(account.oldSelector)]);
        const [row] = await db.select().from(mailDomains).where(eq(mailDomains.id, account.mailDomainId));
        assert.ok(row);
      }));
  });
}
