import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { eq } from "drizzle-orm";
import { auditLog, hostingAccounts, nodes } from "@/db/schema";
import { createAccount } from "@/lib/accounts/service";
import type { Actor } from "@/lib/audit/service";
import { recordNodeLimitReached } from "@/lib/email/sending";
import { machineBackends } from "../support/database";
import { useStandInNodes, withStandInNodes } from "../support/stand-in-agent";

// A node's word that one of its accounts reached its sending limits (the agent's `mail-limit`
// event, docs/email.md "Sending limits"): the account is flagged and audited as on the panel's own
// machine — but only an account on that node. A node's root may be an attacker's
// (docs/security.md "Nodes are not trusted"): naming another node's account, or the panel's own,
// or sending something that is not the event, changes nothing.

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "panel-email-node-limits-"));
Object.assign(process.env, {
  DATA_DIR: path.join(scratch, "data"),
  ZONES_DIR: path.join(scratch, "data", "zones"),
  NATS_SEED_FILE: path.join(scratch, "nats-panel.nk"),
  NATS_INSECURE: "1",
});
for (const name of ["DATABASE_URL", "MYSQL_PROVISION_URL", "WEB_SERVER", "SYSTEM_USERS", "SSH_SERVER", "MAIL_SERVER", "NATS_AUTH_FILE", "NATS_RELOAD_COMMAND"]) delete process.env[name];

const admin: Actor = { type: "cli" };
useStandInNodes(scratch);
after(() => fs.rmSync(scratch, { recursive: true, force: true }));

// One backend: what is tested is whose account a node may flag, not the storage. PostgreSQL here,
// PGlite in tests/api/email-sending-limits.test.ts, which raises the same flag for a local refusal.
for (const backend of machineBackends("postgres")) {
  describe(`sending limits reported by a node (${backend})`, () => {
    test("flags that node's account once, audited as the system; another node's account, local's, or a malformed event: nothing", async () => {
      await withStandInNodes(backend, { n2: "192.0.2.2", n3: "192.0.2.3" }, async (db) => {
        const onN2 = await createAccount(db, { username: "sender2", domain: "sender2.example", node: "n2" }, admin);
        const onN3 = await createAccount(db, { username: "sender3", domain: "sender3.example", node: "n3" }, admin);
        const onLocal = await createAccount(db, { username: "senderl", domain: "senderl.example" }, admin);
        const [n2] = await db.select({ id: nodes.id }).from(nodes).where(eq(nodes.name, "n2"));
        const flaggedAt = async (accountId: number) => (await db.select({ at: hostingAccounts.mailFlaggedAt }).from(hostingAccounts).where(eq(hostingAccounts.id, accountId)))[0].at;
        const event = (username: string) => ({ username, login: `news@${username}.example`, period: "hour", limit: 20 });

        // n2 names accounts that are not its own, and sends what is not the event.
        await recordNodeLimitReached(db, n2.id, "n2", event("sender3"));
        await recordNodeLimitReached(db, n2.id, "n2", event("senderl"));
        for (const malformed of [null, "sender2", { ...event("sender2"), period: "week" }, { ...event("sender2"), limit: -1 }, { ...event("sender2"), username: "x".repeat(65) }]) {
          await recordNodeLimitReached(db, n2.id, "n2", malformed);
        }
        for (const account of [onN2, onN3, onLocal]) assert.equal(await flaggedAt(account.id), null, `${account.username} is not flagged`);

        // Its own account: flagged, once.
        await recordNodeLimitReached(db, n2.id, "n2", event("sender2"));
        const first = await flaggedAt(onN2.id);
        assert.ok(first instanceof Date);
        await recordNodeLimitReached(db, n2.id, "n2", { ...event("sender2"), period: "day", limit: 200 });
        assert.equal((await flaggedAt(onN2.id))?.getTime(), first.getTime(), "a flag already up stays as it was");
        const audits = await db.select().from(auditLog).where(eq(auditLog.action, "hosting_account.mail_flag"));
        assert.deepEqual(
          audits.map((row) => [row.targetId, row.actorType, row.details]),
          [[onN2.id, "system", { login: "news@sender2.example", period: "hour", limit: 20 }]],
        );
      });
    });
  });
}
