import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { and, eq } from "drizzle-orm";
import type { Connection } from "@/db/client";
import { dnsRecords, domains, hostingAccounts } from "@/db/schema";
import { createAccount } from "@/lib/accounts/service";
import { syncAllZoneFiles, syncZoneFile } from "@/lib/dns/zone-file-sync";
import { syncAccountSites, syncAllSites } from "@/lib/hosting/service";
import { toErrorResponse } from "@/lib/http/respond";
import { createTestDatabase, machineBackends, type TestDatabase } from "../support/database";
import { seedActor } from "../support/seed";

// A hostile value written to the database directly (or stored by an older version) reaches the
// renderers without a request schema: the renderer refuses it (render-checks.ts). A request
// that would render it fails as a server fault (500, generic words, nothing written); the
// start-up sync logs it and writes every other site; a zone change keeps its old zone file and
// answers a warning without internals. The services run in this process; `true` stands for nginx -t.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-stored-values-"));
Object.assign(process.env, {
  WEB_SERVER: "nginx",
  HOME_ROOT: path.join(root, "home"),
  ACCESS_LOG_DIR: path.join(root, "logs"),
  NGINX_SITES_DIR: path.join(root, "sites"),
  NGINX_TEST_COMMAND: "true",
  NGINX_RELOAD_COMMAND: "true",
  // No nginx runs here: no master whose new workers a reload would wait for.
  NGINX_PID_FILE: "/dev/null",
  PHP_FPM_POOL_DIR: path.join(root, "pools", "{version}"),
  PHP_FPM_SOCKET_DIR: path.join(root, "run"),
  ZONES_DIR: path.join(root, "zones"),
});

after(() => fs.rmSync(root, { recursive: true, force: true }));

const siteFile = (domain: string) => path.join(root, "sites", `${domain}.conf`);

for (const backend of machineBackends("pglite")) {
  describe(`stored values the renderers refuse (${backend})`, () => {
    let database: TestDatabase;
    let connection: Connection;
    const victim = `sv${randomBytes(4).toString("hex")}`;
    const other = `sv${randomBytes(4).toString("hex")}`;
    let victimAccountId: number;
    before(async () => {
      database = await createTestDatabase(backend);
      connection = await database.open();
      for (const username of [victim, other]) await createAccount(connection.db, { username, domain: `${username}.example` }, seedActor);
      const [row] = await connection.db.select({ id: hostingAccounts.id }).from(hostingAccounts).where(eq(hostingAccounts.username, victim));
      victimAccountId = row.id;
    });
    after(async () => {
      await connection?.close();
      await database?.drop();
    });

    test("a document root written outside the home: the sync refuses it, 500 without internals, the site file unchanged", async () => {
      const before = fs.readFileSync(siteFile(`${victim}.example`), "utf8");
      await connection.db.update(domains).set({ domainPath: `../${other}/public_html` }).where(eq(domains.domain, `${victim}.example`));
      const refusal = await syncAccountSites(connection.db, victimAccountId).then(
        () => assert.fail("the sync must refuse the stored document root"),
        (error: Error) => error,
      );
      assert.match(refusal.message, /^nginx server block: refused the document root ".*\/home\/sv[0-9a-f]+\/public_html"/);
      const answer = toErrorResponse(refusal, "Domain change");
      assert.equal(answer.status, 500);
      const body = await answer.json();
      assert.deepEqual(body, { error: "Domain change could not complete because of an internal error" });
      assert.equal(fs.readFileSync(siteFile(`${victim}.example`), "utf8"), before);
    });

    test("at start: the refused site keeps its file, every other site is written", async () => {
      fs.rmSync(siteFile(`${other}.example`));
      const before = fs.readFileSync(siteFile(`${victim}.example`), "utf8");
      await syncAllSites(connection.db);
      assert.ok(fs.existsSync(siteFile(`${other}.example`)), "the other account's site is written again");
      assert.equal(fs.readFileSync(siteFile(`${victim}.example`), "utf8"), before, "the refused site is neither rewritten nor removed");
      assert.doesNotMatch(before, new RegExp(`/home/${other}/`), "the other account's home was never written into it");
    });

    test("a record name with a line in it: the zone file stays as it was, the change answers a warning without internals", async () => {
      const [zone] = await connection.db.select({ id: domains.id }).from(domains).where(eq(domains.domain, `${other}.example`));
      const file = path.join(root, "zones", `${other}.example.zone`);
      assert.equal((await syncZoneFile(connection.db, zone.id)).warning, undefined);
      const before = fs.readFileSync(file, "utf8");
      await connection.db
        .update(dnsRecords)
        .set({ name: "www\n@ 60 IN A 203.0.113.66\nx" })
        .where(and(eq(dnsRecords.domainId, zone.id), eq(dnsRecords.type, "A")));
      const result = await syncZoneFile(connection.db, zone.id);
      assert.match(result.warning ?? "", /^Saved, but the zone file could not be written/);
      assert.doesNotMatch(result.warning ?? "", /203\.0\.113\.66|record name|zone file:/);
      assert.equal(fs.readFileSync(file, "utf8"), before);
    });

    test("at start: the refused zone keeps its file, every other zone is written", async () => {
      const refusedFile = path.join(root, "zones", `${other}.example.zone`);
      const otherFile = path.join(root, "zones", `${victim}.example.zone`);
      const before = fs.readFileSync(refusedFile, "utf8");
      fs.rmSync(otherFile, { force: true });
      await syncAllZoneFiles(connection.db);
      assert.ok(fs.existsSync(otherFile), "the other zone is written again");
      assert.equal(fs.readFileSync(refusedFile, "utf8"), before, "the refused zone is neither rewritten nor removed");
    });

    test("at start the zone files are written once, while nginx tests the written sites, or after the sites when there is no test", async () => {
      const zoneFile = path.join(root, "zones", `${victim}.example.zone`);
      const writeZones = (sitesOnDisk: boolean[]) => async () => {
        sitesOnDisk.push(fs.existsSync(siteFile(`${other}.example`)));
        fs.rmSync(zoneFile, { force: true });
        await syncAllZoneFiles(connection.db);
      };
      fs.rmSync(siteFile(`${other}.example`));
      const withTest: boolean[] = [];
      await syncAllSites(connection.db, writeZones(withTest));
      assert.deepEqual(withTest, [true], "started once, the site file written before it");
      assert.ok(fs.existsSync(zoneFile), "the zone file is written");
      const nothingChanged: boolean[] = [];
      await syncAllSites(connection.db, writeZones(nothingChanged));
      assert.deepEqual(nothingChanged, [true], "started once when nothing was tested either");
      assert.ok(fs.existsSync(zoneFile));
    });
  });
}
