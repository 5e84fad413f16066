import assert from "node:assert/strict";
import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { test } from "node:test";
import { checkedAnswer, heartbeatSchema, jobResultSchema } from "@/lib/nodes/answers";

// A node whose root was taken answers the panel's jobs with crafted values (docs/security.md
// "Nodes are not trusted"). Each answer below is what the audit of issue 36 sent; each is refused
// whole by the check every answer of another node goes through (lib/nodes/hosts.ts), so nothing
// of it is kept or passed to another node. On the code before this change there was no check:
// the move's target was handed this answer unchanged (it dropped and re-created bob_u with the
// given hash, and gave a loader ALL PRIVILEGES on `mysql`).
//
// Not here yet: the same answers sent over NATS by a fake agent holding a real node's NKEY
// (tests/api/nodes.test.ts shows how), with a real target node's MariaDB checked afterwards.

const ID = "0".repeat(64);
const HASH = `*${"A".repeat(40)}`;
const asked = {
  move: { repository: "/srv/moves/m1", password: "p" },
  pass: "copy" as const,
  username: "alice",
  folders: ["public_html"],
  copy: null,
  databases: ["alice_shop"],
  database_users: ["alice_u"],
};
const refuse = (op: Parameters<typeof checkedAnswer>[1], input: unknown, value: unknown) =>
  assert.throws(() => checkedAnswer("n1", op, input as never, value), /The node n1 answered .* with what the panel did not ask for/);

test("move.snapshot: a system database, another account's user, an option-looking or short id are refused", () => {
  const good = { home: ID, dumps: [{ database: "alice_shop", snapshot: ID }], password_hashes: { alice_u: HASH } };
  assert.deepEqual(checkedAnswer("n1", "move.snapshot", asked, { ...good, extra: "dropped" }), good);
  refuse("move.snapshot", asked, { ...good, dumps: [{ database: "mysql", snapshot: ID }] });
  refuse("move.snapshot", asked, { ...good, dumps: [...good.dumps, ...good.dumps] });
  refuse("move.snapshot", asked, { ...good, password_hashes: { alice_u: HASH, bob_u: HASH } });
  refuse("move.snapshot", asked, { ...good, password_hashes: { alice_u: "x' OR 1=1" } });
  refuse("move.snapshot", asked, { ...good, home: "--option=sftp.command=/bin/sh -c 'id > /tmp/x'" });
  refuse("move.snapshot", asked, { ...good, home: "0000abcd" });
  refuse("move.snapshot", asked, { ...good, home: { id: ID, paths: ["--option=sftp.command=/bin/sh"] } });
  refuse("move.snapshot", asked, { ...good, dumps: "all" });
});

test("backup answers: databases, users and snapshots the panel did not ask for are refused", () => {
  const input = { username: "alice", tags: ["owner:1", "run:r1"], databases: ["alice_shop"], database_users: ["alice_u"] };
  refuse("backup.parts", input, { objects: [{ database: "bob_shop", type: "VIEW", name: "v", definer: "x" }], password_hashes: {} });
  refuse("backup.parts", input, { objects: [], password_hashes: { root: HASH } });
  const snapshot = { id: ID, short_id: "0", time: "2026-01-01T00:00:00Z", paths: ["/home.tar"], tags: ["owner:1", "run:r1"] };
  assert.equal(checkedAnswer("n1", "backup.snapshots", { tags: ["owner:1"] }, [snapshot]).length, 1);
  refuse("backup.snapshots", { tags: ["owner:2"] }, [snapshot]);
  refuse("backup.snapshots", { tags: ["owner:1"] }, [{ ...snapshot, id: "-x" }]);
  refuse("backup.stored-bytes", { tag: "owner:1" }, -5);
  refuse("backup.read-records", { snapshot_id: ID }, "x".repeat(64 * 1024 * 1024 + 1));
});

test("other answers: names among those sent, sizes bounded", () => {
  assert.equal(checkedAnswer("n1", "databases.call", { call: "createDatabase", args: ["alice_shop"] }, { configured: true }).configured, true);
  assert.deepEqual(checkedAnswer("n1", "databases.call", { call: "databaseSizesMb", args: [["alice_shop"]] }, { configured: true, value: [["alice_shop", 1.5]] }), {
    configured: true,
    value: [["alice_shop", 1.5]],
  });
  refuse("node.reconcile", { accounts: [{ account: { username: "alice" } }], phpVersions: [] }, { failed: ["bob"] });
  refuse("databases.call", { call: "databaseSizesMb", args: [["alice_shop"]] }, { configured: true, value: [["bob_shop", 1]] });
  refuse("account.disk-usage", { username: "alice" }, { mb: -1, enforced: true });
  refuse("account.disk-usage", { username: "alice" }, { mb: "1e999", enforced: "yes" });
  refuse("certificates.list", { domains: ["alice.example"] }, [{ domain: "bob.example", certificate: null }]);
  refuse("certificates.list", { domains: null }, [{ domain: "../../etc", certificate: null }]);
  refuse("account.provision", { account: { username: "alice", domains: [{ domain: "alice.example" }] }, shell: false, diskMb: null }, {
    username: "bob",
    userCreated: true,
    homeWasThere: false,
    siteDomains: [],
  });
  refuse("certificates.request", { domain: "alice.example", names: ["alice.example"] }, "not a request");
  const mailboxes = { username: "alice", mailboxes: [{ localPart: "info", domain: "alice.example" }] };
  assert.deepEqual(checkedAnswer("n1", "mail.usage", mailboxes, [{ address: "info@alice.example", mb: 1.5 }]), [{ address: "info@alice.example", mb: 1.5 }]);
  refuse("mail.usage", mailboxes, [{ address: "ceo@bob.example", mb: 1 }]);
  refuse("mail.usage", mailboxes, [{ address: "info@alice.example", mb: -1 }]);
  refuse("mail.apply", { username: "alice", suspended: false, mail: null }, { settle_ms: 60_000 });
  refuse("mail.apply", { username: "alice", suspended: false, mail: null }, null);
  refuse("mail.usage", mailboxes, [{ address: "info@alice.example", mb: 1 }, { address: "info@alice.example", mb: 2 }]);
  // A DKIM public key goes into the account's zone: a 2048-bit RSA key, nothing else.
  const dkim = { domain: "alice.example", selector: "s1" };
  const spki = (key: KeyObject) => key.export({ type: "spki", format: "der" }).toString("base64");
  const rsa2048 = spki(generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey);
  assert.deepEqual(checkedAnswer("n1", "mail.dkim-key", dkim, { public_key: rsa2048 }), { public_key: rsa2048 });
  refuse("mail.dkim-key", dkim, { public_key: spki(generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey) });
  refuse("mail.dkim-key", dkim, { public_key: spki(generateKeyPairSync("rsa", { modulusLength: 4096 }).publicKey) });
  refuse("mail.dkim-key", dkim, { public_key: `${rsa2048.slice(0, 100)}"; v=spf1 +all; p=${rsa2048.slice(100)}` });
  refuse("mail.dkim-key", dkim, { public_key: "A".repeat(392) });
  refuse("mail.dkim-key", dkim, { public_key: `${rsa2048}\n` });
});

test("results and heartbeats: an unknown error code is a fault, messages and fields are bounded, a malformed beat is dropped", () => {
  const result = jobResultSchema.parse({ id: "j1", ok: false, error: { code: "__proto__", message: "x".repeat(100_000), fields: { a: ["y".repeat(10_000)] } } });
  assert.equal(result.ok, false);
  if (!result.ok) {
    assert.equal(result.error.code, "INTERNAL");
    assert.equal(result.error.message.length, 500);
    assert.equal(result.error.fields!.a[0].length, 300);
  }
  assert.equal(jobResultSchema.safeParse({ id: "x".repeat(10_000), ok: true, value: null }).success, false);
  for (const beat of [
    { agent_version: "x".repeat(10_000), protocol: 4, disk: null, load: [0, 0, 0] },
    { agent_version: "1", protocol: 4, disk: { total_bytes: -1, used_bytes: 1e300 }, load: [0, 0, 0] },
    { agent_version: "1", protocol: "4", disk: null, load: ["x"] },
    { agent_version: "1", protocol: 4, disk: null, load: Array(1e5).fill(1) },
  ]) {
    assert.equal(heartbeatSchema.safeParse(beat).success, false, JSON.stringify(beat).slice(0, 80));
  }
});
