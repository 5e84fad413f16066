import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { startNats, type TestNats } from "../support/nats";
import { startSharedMariadb } from "../support/node-mariadb";
import { makeKey } from "../support/seed";
import { startTestNode, type TestNode } from "../support/test-node";
import { waitFor } from "../support/wait";

// The panel adopts nothing it did not make, on every machine (docs/security.md "The panel adopts
// nothing it did not make"; issue 36, items 3 and 4b), tried as it happens on a real node:
//   - a move's target already has a Linux user of the account's name (a service's, with its own
//     shell and crontab), a MariaDB database of one of the account's database names, and an
//     nginx file of its domain, none made by the panel: the move is cancelled in its preparing
//     step naming them, and none of them changes. Run on the code before the fix, the move went
//     through to `done` (this test failed there): the target's account.ensure had taken the user
//     over (its shell, the panel's crontab for it) and the copy had dropped and re-made the
//     database.
//   - two nodes pointed at one MariaDB server: the second is refused at its first database job,
//     naming the first. Run on the code before the fix, the second node made its database there
//     (201, this test failed at it), and a move between the two would lose the source's databases.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-marks-nodes-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const [backend] = machineBackends("postgres");

describe(`what a node has that the panel did not make (${backend})`, () => {
  let env: TestEnvironment<{ adminKey: Awaited<ReturnType<typeof makeKey>> }>;
  let nats: TestNats;
  const nodes: TestNode[] = [];
  let shared: Awaited<ReturnType<typeof startSharedMariadb>> | null = null;
  const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
  const tag = randomBytes(3).toString("hex");

  before(async () => {
    nats = await startNats(path.join(root, "nats"), "0.0.0.0");
    env = await createEnvironment(backend, async (db) => ({ adminKey: await makeKey(db, { scope: "admin" }) }), {
      ...nats.env,
      NODE_JOB_TIMEOUT_S: "10",
      MOVE_REPOSITORY: path.join(root, "moves"),
    });
  });

  after(async () => {
    for (const node of nodes) await node.stop();
    await shared?.stop();
    await env?.teardown();
    await nats?.stop();
  });

  const startNode = async (name: string, options: { mariadb?: boolean; env?: Parameters<typeof startTestNode>[1]["env"] }) => {
    const node = await startTestNode(name, { panelPort: env.server.port, admin: env.seed.adminKey, nats, ...options });
    nodes.push(node);
    return node;
  };

  test("a move to a node with an unmarked Linux user, database and nginx file of the account's names is cancelled naming them; none of them changes", async () => {
    const [n1, n2] = [await startNode(`s${tag}`, { mariadb: true }), await startNode(`t${tag}`, { mariadb: true })];
    const username = `svc${tag}`;
    const domain = `${username}.example`;
    const created = await admin().post("/api/admin/accounts", { username, domain, node: n1.name });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const database = await apiClient(env.server.baseUrl, env.seed.adminKey, username).post("/api/client/databases", { database_name: "shop" });
    assert.equal(database.status, 201, JSON.stringify(database.body));
    const shop = `${username}_shop`;

    // On the target, as its administrator (or a package) made them: a service user of the
    // account's name with its own shell and crontab, a database of the same name with a row, a
    // server block of the domain's file name.
    const onTarget = (program: string, args: string[]) => {
      const ran = n2.host.run(program, args);
      assert.equal(ran.code, 0, `${program}: ${ran.stderr}`);
      return ran.stdout;
    };
    onTarget("useradd", ["--system", "--home-dir", "/var/lib/service", "--no-create-home", "--shell", "/bin/sh", "--user-group", username]);
    onTarget("sh", ["-c", `echo '17 3 * * * /usr/bin/true # the service own job' | crontab -u ${username} -`]);
    const sql = (statement: string) => onTarget("mariadb", ["--no-defaults", "-h", "127.0.0.1", "-u", "root", "-N", "-e", statement]);
    sql(`CREATE DATABASE \`${shop}\`; CREATE TABLE \`${shop}\`.t (v VARCHAR(20)); INSERT INTO \`${shop}\`.t VALUES ('the service row');`);
    const siteFile = path.join(n2.env.NGINX_SITES_DIR, `${domain}.conf`);
    fs.writeFileSync(siteFile, "# an administrator's own file\n");
    const passwdBefore = onTarget("getent", ["passwd", username]);
    const groupsBefore = onTarget("id", ["-nG", username]);
    const crontabBefore = onTarget("crontab", ["-l", "-u", username]);

    const moved = await admin().post(`/api/admin/accounts/${created.body.id}/move`, { node: n2.name });
    assert.equal(moved.status, 202, JSON.stringify(moved.body));
    const ended = await waitFor(
      "the move to end",
      async () => {
        const move = (await admin().get(`/api/admin/accounts/${created.body.id}`)).body.move;
        return move && ["done", "cancelled"].includes(move.state) ? move : null;
      },
      240_000,
    );
    assert.equal(ended.state, "cancelled", JSON.stringify(ended));
    assert.match(ended.error ?? "", new RegExp(`Linux user or group ${username}`), JSON.stringify(ended));
    assert.match(ended.error ?? "", new RegExp(`MariaDB database ${shop}`), JSON.stringify(ended));
    assert.match(ended.error ?? "", /nginx file/, JSON.stringify(ended));
    assert.equal(ended.attempts, 0, "refused at once, not tried again");

    // Nothing of the target's own changed.
    assert.equal(onTarget("getent", ["passwd", username]), passwdBefore, "the service user's shell and home");
    assert.equal(onTarget("id", ["-nG", username]), groupsBefore, "the service user's groups");
    assert.equal(onTarget("crontab", ["-l", "-u", username]), crontabBefore, "the service user's crontab");
    assert.equal(sql(`SELECT v FROM \`${shop}\`.t`).trim(), "the service row");
    assert.equal(fs.readFileSync(siteFile, "utf8"), "# an administrator's own file\n");
    assert.equal(fs.existsSync(path.join(n2.env.HOME_ROOT, username)), false, "no home made on the target");
    // The account stays where it was, served there.
    const account = (await admin().get(`/api/admin/accounts/${created.body.id}`)).body;
    assert.equal(account.node, n1.name);
    assert.notEqual((await n1.visit(domain)).status, 503);
  });

  test("two nodes on one MariaDB server: the second is refused at its first database job, naming the first; the first goes on", async () => {
    shared = await startSharedMariadb(path.join(root, "shared-mariadb"));
    const url = shared.urlFor;
    const first = await startNode(`a${tag}`, { env: (host) => ({ MYSQL_PROVISION_URL: url(host.gateway) }) });
    const usernameA = `a${tag}`;
    assert.equal((await admin().post("/api/admin/accounts", { username: usernameA, domain: `${usernameA}.example`, node: first.name })).status, 201);
    const madeOnFirst = await apiClient(env.server.baseUrl, env.seed.adminKey, usernameA).post("/api/client/databases", { database_name: "one" });
    assert.equal(madeOnFirst.status, 201, JSON.stringify(madeOnFirst.body));

    const second = await startNode(`b${tag}`, { env: (host) => ({ MYSQL_PROVISION_URL: url(host.gateway) }) });
    const usernameB = `b${tag}`;
    assert.equal((await admin().post("/api/admin/accounts", { username: usernameB, domain: `${usernameB}.example`, node: second.name })).status, 201);
    const refused = await apiClient(env.server.baseUrl, env.seed.adminKey, usernameB).post("/api/client/databases", { database_name: "two" });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.match(refused.body.error, new RegExp(`already serves the node ${first.name}`));
    assert.match(second.agentLog(), new RegExp(`already serves the node ${first.name}`), "said at the agent's start too");
    assert.equal((await apiClient(env.server.baseUrl, env.seed.adminKey, usernameB).get("/api/client/databases")).status, 404, "no record kept");

    const again = await apiClient(env.server.baseUrl, env.seed.adminKey, usernameA).post("/api/client/databases", { database_name: "again" });
    assert.equal(again.status, 201, JSON.stringify(again.body));
  });
});
