import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { and, eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { dnsRecords, mailDkimKeys } from "@/db/schema";
import { createAccount } from "@/lib/accounts/service";
import type { Actor } from "@/lib/audit/service";
import { DKIM_RETIRED_KEEP_MS, sweepRetiredDkimKeys } from "@/lib/email/dkim";
import { createMailDomain, rotateDkimKey } from "@/lib/email/service";
import { testBackends } from "../support/database";
import { useStandInNodes, withStandInNodes } from "../support/stand-in-agent";

// What the panel stores about DKIM keys (docs/email.md "DKIM"), with a stand-in node answering
// for the machine (tests/support/stand-in-agent.ts): a mail domain's first key signs at once and is
// in the zone; a rotation publishes the new key, then signs with it and retires the old one, whose
// record stays 7 days; the sweep takes out the records whose 7 days are over, and only those. The
// key made and used for real (rspamd, dkimpy) is tests/api/email-delivery.test.ts's; here the
// retirement's clock is moved in the sweep's `now`.

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "panel-email-dkim-"));
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

for (const backend of testBackends()) {
  describe(`DKIM keys of mail domains (${backend})`, () => {
    const txtAt = async (db: Database, domainId: number, name: string) =>
      (await db.select({ content: dnsRecords.content }).from(dnsRecords).where(and(eq(dnsRecords.domainId, domainId), eq(dnsRecords.name, name), eq(dnsRecords.type, "TXT")))).map((row) => row.content);

    test("a mail domain's first key signs at once and is in its zone; a rotation publishes, signs, retires the old key for 7 days; the sweep takes out only what is over", async () => {
      await withStandInNodes(backend, { n2: "192.0.2.2" }, async (db) => {
        const account = await createAccount(db, { username: "dk", domain: "dk.example", node: "n2" }, admin);
        const mailDomain = await createMailDomain(db, account.id, { domain: "dk.example" });
        const first = mailDomain.dkim.selector!;
        assert.equal(mailDomain.dkim.keys.length, 1);
        assert.equal(mailDomain.dkim.keys[0].state, "signing");
        assert.equal(mailDomain.dns.dkim.status, "ok");
        const [firstTxt] = await txtAt(db, mailDomain.domain_id, `${first}._domainkey`);
        assert.match(firstTxt, /^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]{300,}={0,2}$/);

        const rotated = await rotateDkimKey(db, account.id, mailDomain.id);
        const second = rotated.dkim.selector!;
        assert.notEqual(second, first);
        assert.deepEqual(
          rotated.dkim.keys.map((key) => [key.selector, key.state]),
          [
            [first, "retired"],
            [second, "signing"],
          ],
        );
        const retiredAt = Date.parse(rotated.dkim.keys[0].retired_at!);
        assert.equal(Date.parse(rotated.dkim.keys[0].unpublished_after!), retiredAt + DKIM_RETIRED_KEEP_MS);
        assert.equal((await txtAt(db, mailDomain.domain_id, `${first}._domainkey`)).length, 1, "the old selector stays published");
        assert.equal((await txtAt(db, mailDomain.domain_id, `${second}._domainkey`)).length, 1);
        const third = (await rotateDkimKey(db, account.id, mailDomain.id)).dkim.selector!;

        // Six days on: nothing goes. Eight days on: the first key's record goes, the second's (retired just now) stays.
        assert.equal(await sweepRetiredDkimKeys(db, new Date(retiredAt + 6 * 24 * 3600 * 1000)), 0);
        assert.equal((await txtAt(db, mailDomain.domain_id, `${first}._domainkey`)).length, 1);
        await db.update(mailDkimKeys).set({ retiredAt: new Date(Date.now() - DKIM_RETIRED_KEEP_MS - 60_000) }).where(eq(mailDkimKeys.selector, first));
        assert.equal(await sweepRetiredDkimKeys(db), 1);
        assert.deepEqual(await txtAt(db, mailDomain.domain_id, `${first}._domainkey`), []);
        assert.equal((await txtAt(db, mailDomain.domain_id, `${second}._domainkey`)).length, 1);
        assert.equal((await txtAt(db, mailDomain.domain_id, `${third}._domainkey`)).length, 1);
        const zone = fs.readFileSync(path.join(scratch, "data", "zones", "dk.example.zone"), "utf8");
        assert.doesNotMatch(zone, new RegExp(first));
        assert.match(zone, new RegExp(`^${third}\\._domainkey\\t`, "m"));
        assert.deepEqual((await db.select({ selector: mailDkimKeys.selector }).from(mailDkimKeys)).map((row) => row.selector).sort(), [second, third].sort());
      });
    });
  });
}
