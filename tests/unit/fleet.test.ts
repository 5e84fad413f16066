import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Connection } from "@/db/client";
import { eq } from "drizzle-orm";
import { hostingAccounts, metricNetworkSamples, metricSamples, nodeJobs, nodes } from "@/db/schema";
import { createAccount } from "@/lib/accounts/service";
import type { AccountBackupStatus } from "@/lib/backups/schemas";
import { queryMetricsOverRange } from "@/lib/metrics/service";
import { flaggedAccounts, needsAttention } from "@/lib/nodes/fleet";
import type { NodeRecord } from "@/lib/nodes/service";
import { localNodeId } from "@/lib/nodes/service";
import { createTestDatabase, type TestDatabase, testBackends } from "../support/database";

// The fleet dashboard's services (app/admin/page.tsx): what needs the admin now, the accounts
// whose node work failed, and a machine's metrics over a range as rates. The page itself is
// e2e/dashboard.spec.ts; the states a test panel cannot be brought into cheaply (an agent that
// answers but is outdated, a backup that failed last night) are proved here.

const actor = { type: "system" } as const;
const GIB = 1024 ** 3;
const now = Date.parse("2026-11-28T12:00:00Z");

function node(name: string, changes: Partial<NodeRecord> = {}): NodeRecord {
  return {
    id: name.length,
    name,
    ipv4: null,
    ssh_host: null,
    state: "active",
    draining: false,
    enrolled: true,
    last_heartbeat_at: new Date(now - 5_000).toISOString(),
    agent_version: "0.0.1",
    accounts: 0,
    disk: { total_bytes: 100 * GIB, used_bytes: 50 * GIB },
    load: [0.1, 0.1, 0.1],
    created_at: new Date(now).toISOString(),
    updated_at: new Date(now).toISOString(),
    ...changes,
  };
}

function backup(username: string, changes: Partial<AccountBackupStatus>): AccountBackupStatus {
  return { account_id: username.length, username, last_success_at: null, last_failure_at: null, last_error: null, snapshots: 0, size_bytes: null, ...changes } as AccountBackupStatus;
}

describe("what needs the admin now", () => {
  test("an outdated agent, an unreachable node, one never joined, and a disk over 90 % are named; 90 % itself is not", () => {
    const items = needsAttention(
      [
        node("ok"),
        node("old", { state: "outdated" }),
        node("gone", { state: "unreachable" }),
        node("new", { state: "unreachable", enrolled: false, last_heartbeat_at: null, disk: null }),
        node("full", { disk: { total_bytes: 100 * GIB, used_bytes: 91 * GIB } }),
        node("edge", { disk: { total_bytes: 100 * GIB, used_bytes: 90 * GIB } }),
      ],
      [],
      [],
      now,
    );
    assert.deepEqual(
      items.map((item) => `${item.kind} ${"node" in item ? item.node.name : ""}`),
      ["node_outdated old", "node_unreachable gone", "node_not_joined new", "disk_full full"],
    );
  });

  test("a backup that failed last night is named; one that failed days ago, or failed and then succeeded, is not", () => {
    const items = needsAttention(
      [],
      [
        backup("lastnight", { last_error: "restic: repository locked", last_failure_at: new Date(now - 8 * 3600_000).toISOString() }),
        backup("longago", { last_error: "restic: repository locked", last_failure_at: new Date(now - 4 * 86_400_000).toISOString() }),
        backup("recovered", { last_error: null, last_failure_at: new Date(now - 8 * 3600_000).toISOString(), last_success_at: new Date(now - 3600_000).toISOString() }),
      ],
      [{ account_id: 9, username: "flagged", reason: "node_sync", error: "nginx -t refused the site" }],
      now,
    );
    assert.deepEqual(
      items.map((item) => `${item.kind} ${"account" in item ? item.account.username : ""}`),
      ["backup_failed lastnight", "account_flagged flagged"],
    );
  });

  test("nothing wrong: nothing listed", () => {
    assert.deepEqual(needsAttention([node("ok")], [backup("fine", { last_success_at: new Date(now - 3600_000).toISOString() })], [], now), []);
  });
});

for (const backend of testBackends()) {
  describe(`fleet services (${backend})`, () => {
    let database: TestDatabase;
    let connection: Connection;
    before(async () => {
      database = await createTestDatabase(backend);
      connection = await database.open();
    });
    after(async () => {
      await connection?.close();
      await database?.drop();
    });

    test("an account is flagged when its newest finished node job failed and none is pending", async () => {
      const { db } = connection;
      const local = await localNodeId(db);
      const job = (accountId: number, state: "pending" | "done" | "failed", error: string | null = null) => ({
        nodeId: local,
        accountId,
        jobId: `job-${accountId}-${Math.random().toString(36).slice(2)}`,
        kind: "reconcile",
        payload: {},
        state,
        error,
      });
      const failed = await createAccount(db, { username: "failedjob", domain: "failedjob.example" }, actor);
      const retried = await createAccount(db, { username: "retried", domain: "retried.example" }, actor);
      const waiting = await createAccount(db, { username: "waiting", domain: "waiting.example" }, actor);
      await createAccount(db, { username: "nojobs", domain: "nojobs.example" }, actor);
      for (const row of [
        job(failed.id, "done"),
        job(failed.id, "failed", "the site's test failed"),
        job(retried.id, "failed", "first try"),
        job(retried.id, "done"),
        job(waiting.id, "failed", "before the node went away"),
        job(waiting.id, "pending"),
      ]) {
        await db.insert(nodeJobs).values(row);
      }
      assert.deepEqual(await flaggedAccounts(db), [{ account_id: failed.id, username: "failedjob", reason: "node_sync", error: "the site's test failed" }]);
      // An account its machine flagged for its sending limits is listed too, until the flag is lifted.
      const sender = await createAccount(db, { username: "zsender", domain: "zsender.example" }, actor);
      await db.update(hostingAccounts).set({ mailFlaggedAt: new Date() }).where(eq(hostingAccounts.id, sender.id));
      assert.deepEqual((await flaggedAccounts(db)).map((item) => [item.username, item.reason]), [["failedjob", "node_sync"], ["zsender", "mail_limits"]]);
      await db.update(hostingAccounts).set({ mailFlaggedAt: null }).where(eq(hostingAccounts.id, sender.id));
    });

    test("metrics over a range: buckets of the machine's own samples, networks as bit/s without loopback", async () => {
      const { db } = connection;
      const [other] = await db.insert(nodes).values({ name: "elsewhere" }).returning({ id: nodes.id });
      const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);
      const sample = async (takenAt: Date, cpu: number, rxBytes: number, nodeId: number | null = null) => {
        const [row] = await db
          .insert(metricSamples)
          .values({ nodeId, takenAt, cpuPercent: cpu, ramPercent: 50, ramTotalMb: 1000, ramUsedMb: 500, ramFreeMb: 500 })
          .returning({ id: metricSamples.id });
        const counters = { rxPackets: 1, txPackets: 1, rxDrops: 0, rxErrors: 0, txDrops: 0, txErrors: 0 };
        await db.insert(metricNetworkSamples).values([
          { sampleId: row.id, interface: "eth0", rxBytes, txBytes: rxBytes / 2, ...counters },
          { sampleId: row.id, interface: "lo", rxBytes: 10 ** 12, txBytes: 10 ** 12, ...counters },
        ]);
      };
      await sample(minutesAgo(20), 10, 7_500);
      await sample(minutesAgo(10), 30, 15_000);
      await sample(minutesAgo(90), 99, 2, null); // outside the hour
      await sample(minutesAgo(5), 99, 2, other.id); // another machine

      const hour = await queryMetricsOverRange(db, "1h", 60);
      assert.equal(hour.bucket_s, 60);
      assert.equal(hour.interval_s, 60);
      assert.deepEqual(hour.points.map((point) => point.cpu_percent), [10, 30]);
      assert.deepEqual(hour.network.map((point) => [point.rx_bps, point.tx_bps]), [[1000, 500], [2000, 1000]]);

      // 30 days in ~120 points: 6-hour buckets, aligned on the epoch, the 90-minute-old sample included.
      const month = await queryMetricsOverRange(db, "30d", 60);
      assert.equal(month.bucket_s, 21_600);
      assert.ok(month.points.length >= 1 && month.points.length <= 2, `${month.points.length} points`);
      assert.ok(month.points.every((point) => point.timestamp % 21_600_000 === 0));
      assert.ok(month.points.some((point) => point.cpu_percent > 30), "the older sample counts in the month");
    });
  });
}
