import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { and, eq, gte } from "drizzle-orm";
import type { Database } from "@/db/client";
import { domains, hostingAccounts, nodeJobs, plans } from "@/db/schema";
import { createZone, nextSerial } from "@/lib/dns/zone";
import { createEnvironment } from "../tests/support/environment";
import { apiClient } from "../tests/support/http";
import { startNats } from "../tests/support/nats";
import { makeKey } from "../tests/support/seed";
import { startTestNode } from "../tests/support/test-node";
import { removeLinuxUsers, startWebServers, systemUsersHostingEnv } from "../tests/support/web-servers";
import { verdict } from "./support";

// (k) Account creation on a remote node against the panel's own machine, in one run: the same
//     POST /api/admin/accounts (Linux user, home, nginx site, zone), ACCOUNTS_TIMED of each,
//     alternated so both share the machine alike. Target: remote ≤ 1.5 × local.
// (l) A node's reconcile on its agent's start with RECONCILE_ACCOUNTS accounts: from the agent's
//     start to the done reconcile job (every user, home, keys file, crontab, site and pool
//     checked, nginx tested once) — once on a fresh node (everything made), then again as a
//     restart finds it (nothing to make). Target for the restart: < 10 s.
// The panel on PostgreSQL; the node a machine of its own (tests/support/node-host.ts).

const ACCOUNTS_TIMED = 15;
const RECONCILE_ACCOUNTS = 3_000;

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Inserts `count` accounts of one domain each on `nodeId`, with their zones, straight into the database. */
async function seedAccounts(db: Database, nodeId: number, count: number): Promise<void> {
  const [plan] = await db.select({ id: plans.id }).from(plans);
  for (let start = 0; start < count; start += 500) {
    await db.transaction(async (tx) => {
      const rows = await tx
        .insert(hostingAccounts)
        .values(Array.from({ length: Math.min(500, count - start) }, (_, i) => ({ username: `rc${start + i}`, domain: `rc${start + i}.example`, planId: plan.id, nodeId })))
        .returning({ id: hostingAccounts.id, username: hostingAccounts.username });
      for (const row of rows) {
        const [domain] = await tx
          .insert(domains)
          .values({ accountId: row.id, domain: `${row.username}.example`, domainType: "domain", domainPath: "public_html", soaSerial: nextSerial(0) })
          .returning();
        await createZone(tx, domain);
      }
    });
  }
}

/** From `restart` (the agent's) to its reconcile job done, in ms. */
async function timeReconcile(db: Database, nodeId: number, restart: () => Promise<void>): Promise<number> {
  const startedAt = new Date();
  await restart();
  for (;;) {
    const jobs = await db.select().from(nodeJobs).where(and(eq(nodeJobs.nodeId, nodeId), eq(nodeJobs.kind, "reconcile"), gte(nodeJobs.createdAt, startedAt)));
    const job = jobs.at(-1);
    if (job?.finishedAt) {
      if (job.state !== "done") throw new Error(`the reconcile failed: ${job.error}`);
      return job.finishedAt.getTime() - startedAt.getTime();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function runNodesBench(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-bench-nodes-"));
  fs.chmodSync(root, 0o755);
  const nats = await startNats(path.join(root, "nats"), "0.0.0.0");
  const local = await startWebServers(path.join(root, "local"));
  const localUsers: string[] = [];
  const seed = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });
  const env = await createEnvironment("postgres", seed, { ...nats.env, ...systemUsersHostingEnv(local, path.join(root, "local")), NODE_JOB_TIMEOUT_S: "60" });
  const node = await startTestNode("bench", { panelPort: env.server.port, admin: env.seed.adminKey, nats });
  try {
    const admin = apiClient(env.server.baseUrl, env.seed.adminKey);
    const timings: Record<"local" | "bench", number[]> = { local: [], bench: [] };
    for (let i = 0; i < ACCOUNTS_TIMED; i++) {
      for (const where of ["local", "bench"] as const) {
        const username = `bn${where === "local" ? "l" : "r"}${i}`;
        if (where === "local") localUsers.push(username);
        const started = performance.now();
        const created = await admin.post("/api/admin/accounts", { username, domain: `${username}.example`, node: where });
        if (created.status !== 201) throw new Error(`account creation failed: ${JSON.stringify(created.body)}`);
        timings[where].push(performance.now() - started);
      }
    }
    const [localMs, remoteMs] = [median(timings.local), median(timings.bench)];
    console.log(`\n(k) account creation, median of ${ACCOUNTS_TIMED}: local ${localMs.toFixed(0)} ms, remote node ${remoteMs.toFixed(0)} ms`);
    verdict("(k) remote / local account creation", remoteMs / localMs, 1.5, "≤");

    const db = env.db!;
    await seedAccounts(db, node.id, RECONCILE_ACCOUNTS);
    const restart = async () => {
      await node.stopAgent();
      node.startAgent();
    };
    const first = await timeReconcile(db, node.id, restart);
    console.log(`(l) reconcile of ${RECONCILE_ACCOUNTS + ACCOUNTS_TIMED} accounts, fresh node (every user, home and site made): ${seconds(first)}`);
    const again = await timeReconcile(db, node.id, restart);
    console.log(`(l) reconcile of ${RECONCILE_ACCOUNTS + ACCOUNTS_TIMED} accounts on the agent's restart: ${seconds(again)}`);
    verdict("(l) reconcile on restart, seconds", again / 1000, 10, "≤");
    // Where the node's time went, as its agent logs it.
    for (const line of node.agentLog().split("\n").filter((text) => text.startsWith("[reconcile]"))) console.log(`    node: ${line}`);
  } finally {
    await node.stop();
    await env.teardown();
    await local.stop();
    await nats.stop();
    removeLinuxUsers(localUsers);
    fs.rmSync(root, { recursive: true, force: true });
  }
}
