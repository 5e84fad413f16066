import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, nkeyAuthenticator } from "@nats-io/transport-node";
import type { Database } from "@/db/client";
import { loadOrCreateIdentity } from "@/lib/agent/identity";
import { encodeMessage, JOBS_STREAM, PROTOCOL_VERSION } from "@/lib/agent/protocol";
import { nodeDataDir, runPanel } from "../support/cli";
import { machineBackends } from "../support/database";
import { createEnvironment, type TestEnvironment } from "../support/environment";
import { apiClient } from "../support/http";
import { startNats, type TestNats } from "../support/nats";
import { makeKey } from "../support/seed";
import { makeTestCertificates, startTlsFront, type TestCertificates, type TlsFront } from "../support/tls";
import { waitFor } from "../support/wait";

// Between machines, as an attacker on the network and as a stolen node act (issue 36, items 4 and
// 6; docs/nodes.md "Security"). The join carries the node's public key: in cleartext, or to a
// panel whose certificate is not checked, someone in between puts their own key in its place and
// receives the node's jobs (customers' passwords among them). And a node's own key floods `hello`,
// each of which made the panel build and queue the whole state of the node's accounts.
//
// Seen to fail on the code before issue 36: a join over http:// and one naming nats:// both
// succeeded (exit 0); the join knew no --fingerprint, so nothing could be pinned; 50 hellos queued
// 50 reconciles on the node's queue.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-node-transport-"));
let nats: TestNats;
/** An attacker's certificate, from a CA of their own, for the same names. */
let attacker: TestCertificates;

before(async () => {
  nats = await startNats(path.join(root, "nats"));
  attacker = makeTestCertificates(path.join(root, "attacker"));
});

after(async () => {
  await nats?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

const seed = async (db: Database) => ({ adminKey: await makeKey(db, { scope: "admin" }) });

const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

const [backend] = machineBackends("postgres");

describe(`nodes' transport (${backend})`, () => {
  let env: TestEnvironment<Awaited<ReturnType<typeof seed>>>;
  /** TLS in front of the panel, with the certificate of the administrator's CA (as nginx on machine P). */
  let front: TlsFront;
  /** Someone in between: TLS with their own certificate, passing everything on to the panel. */
  let inBetween: TlsFront;
  const admin = () => apiClient(env.server.baseUrl, env.seed.adminKey);
  const addNode = async (name: string) => {
    const created = await admin().post("/api/admin/nodes", { name, ipv4: "10.1.0.1" });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body as { id: number; enrolment_token: string };
  };
  const enrolled = async (id: number) => (await admin().get(`/api/admin/nodes/${id}`)).body.enrolled as boolean;

  before(async () => {
    env = await createEnvironment(backend, seed, nats.env);
    front = await startTlsFront(env.server.port, nats.tls);
    inBetween = await startTlsFront(env.server.port, attacker);
  });
  after(async () => {
    await inBetween?.stop();
    await front?.stop();
    await env?.teardown();
  });

  test("a join over http:// or naming nats:// is refused without --insecure, and nothing is sent", async () => {
    const node = await addNode("clear1");
    const overHttp = await runPanel(nodeDataDir(root, "http"), "node", "join", "--panel", env.server.baseUrl, "--token", node.enrolment_token, "--nats", nats.url);
    assert.equal(overHttp.code, 2, overHttp.stdout);
    assert.match(overHttp.stderr, /Refused: http:\/\/127\.0\.0\.1:\d+ would carry this node's key and its jobs .* in cleartext.*--insecure/);
    // The old join had no --ca: the CA is given to Node itself, so that this test ran there too.
    const overNats = await runPanel(
      { ...nodeDataDir(root, "nats"), NODE_EXTRA_CA_CERTS: nats.tls.caFile },
      "node", "join", "--panel", `https://127.0.0.1:${front.port}`, "--token", node.enrolment_token, "--nats", `nats://127.0.0.1:${nats.port}`,
    );
    assert.equal(overNats.code, 2, overNats.stdout);
    assert.match(overNats.stderr, /Refused: nats:\/\/127\.0\.0\.1:\d+ would carry .* cleartext/);
    assert.equal(await enrolled(node.id), false, "the token was not used");
  });

  test("a panel whose certificate is not the pinned one, or that no given CA vouches for, is refused before the key is sent", async () => {
    const node = await addNode("pinned1");
    const dir = nodeDataDir(root, "pinned1");
    const pinnedElsewhere = await runPanel(
      dir, "node", "join", "--panel", `https://127.0.0.1:${inBetween.port}`, "--token", node.enrolment_token, "--nats", nats.url, "--ca", nats.tls.caFile, "--fingerprint", nats.tls.fingerprint,
    );
    assert.equal(pinnedElsewhere.code, 2, pinnedElsewhere.stdout);
    assert.match(pinnedElsewhere.stderr, new RegExp(`fingerprint is ${attacker.fingerprint}, not the one given with --fingerprint: refused`));
    const unvouched = await runPanel(dir, "node", "join", "--panel", `https://127.0.0.1:${inBetween.port}`, "--token", node.enrolment_token, "--nats", nats.url, "--ca", nats.tls.caFile);
    assert.equal(unvouched.code, 2, unvouched.stdout);
    assert.match(unvouched.stderr, /certificate at https:\/\/127\.0\.0\.1:\d+ was not verified/);
    assert.equal(await enrolled(node.id), false, "the token was not used");
    assert.equal(fs.existsSync(path.join(dir.DATA_DIR, "node.json")), false);

    // The same token through the panel's own front, pinned (openssl's way of writing it): joined.
    const opensslWay = `sha256 Fingerprint=${nats.tls.fingerprint}`;
    const joined = await runPanel(
      dir, "node", "join", "--panel", `https://127.0.0.1:${front.port}`, "--token", node.enrolment_token, "--nats", nats.url, "--ca", nats.tls.caFile, "--fingerprint", opensslWay,
    );
    assert.equal(joined.code, 0, joined.stderr);
    assert.equal(await enrolled(node.id), true);
    const config = JSON.parse(fs.readFileSync(path.join(dir.DATA_DIR, "node.json"), "utf8"));
    assert.equal(config.insecure, false);
    assert.equal(fs.readFileSync(config.ca_file, "utf8"), fs.readFileSync(nats.tls.caFile, "utf8"));
    for (const name of ["node.json", "node.nk", "panel-ca.pem"]) assert.equal(modeOf(path.join(dir.DATA_DIR, name)), 0o600, name);
  });

  test("--insecure is accepted, kept, and warned at the join and at every start of the agent", async () => {
    const node = await addNode("clear2");
    const dir = nodeDataDir(root, "clear2");
    const joined = await runPanel(dir, "node", "join", "--panel", env.server.baseUrl, "--token", node.enrolment_token, "--nats", `nats://127.0.0.1:${nats.port}`, "--insecure");
    assert.equal(joined.code, 0, joined.stderr);
    assert.match(joined.stderr, /WARNING: This join speaks to http:\/\/127\.0\.0\.1:\d+ and nats:\/\/127\.0\.0\.1:\d+ without TLS \(--insecure\)/);
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir.DATA_DIR, "node.json"), "utf8")).insecure, true);
    // The agent says so before it connects (this NATS server speaks only TLS, so it goes no further).
    const agent = await runPanel(dir, "node", "agent");
    assert.match(agent.stderr, /WARNING: The agent of node clear2 speaks to nats:\/\/127\.0\.0\.1:\d+ without TLS \(joined with --insecure\)/);
  });

  test("a node's panel.env that its group or others may read: the join refuses it, naming chmod 600", async () => {
    const node = await addNode("envmode1");
    const envFile = path.join(root, "node-panel.env");
    fs.writeFileSync(envFile, "HOME_ROOT=/home\n", { mode: 0o644 });
    fs.chmodSync(envFile, 0o644);
    const refused = await runPanel(
      { ...nodeDataDir(root, "envmode1"), PANEL_ENV_FILE: envFile },
      "node", "join", "--panel", `https://127.0.0.1:${front.port}`, "--token", node.enrolment_token, "--nats", nats.url, "--ca", nats.tls.caFile,
    );
    assert.equal(refused.code, 2, refused.stdout);
    assert.match(refused.stderr, new RegExp(`chmod 600 ${envFile}`));
    assert.equal(await enrolled(node.id), false);
  });

  test("the panel refuses a nats:// NATS_URL without NATS_INSECURE=1, naming the variable", async () => {
    const refused = await runPanel({ ...env.database.env, NATS_URL: `nats://127.0.0.1:${nats.port}` }, "node", "list");
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /NATS_URL: nats:\/\/ carries the nodes' jobs .* in cleartext: use tls:\/\/ .* or set NATS_INSECURE=1/);
  });

  test("a node's hello flood builds one reconcile: a hello counts once per 10 s, and a node has one reconcile waiting at most", async () => {
    const node = await addNode("flood1");
    const dir = nodeDataDir(root, "flood1");
    const joined = await runPanel(dir, "node", "join", "--panel", `https://127.0.0.1:${front.port}`, "--token", node.enrolment_token, "--nats", nats.url, "--ca", nats.tls.caFile);
    assert.equal(joined.code, 0, joined.stderr);
    const nodeKey = await loadOrCreateIdentity(path.join(dir.DATA_DIR, "node.nk"));
    const panelKey = await loadOrCreateIdentity(path.join(env.database.env.DATA_DIR ?? "", "nats-panel.nk"));
    const stolen = await connect({ ...nats.options, authenticator: nkeyAuthenticator(nodeKey.seed), inboxPrefix: "_INBOX_flood1" });
    const panel = await connect({ ...nats.options, authenticator: nkeyAuthenticator(panelKey.seed) });
    try {
      const manager = await jetstreamManager(panel);
      const waiting = async () => (await manager.consumers.info(JOBS_STREAM, "node-flood1")).num_pending;
      /** 50 hellos, then a heartbeat whose version marks that the panel has read past them. */
      const flood = async (mark: string) => {
        for (let i = 0; i < 50; i++) stolen.publish("panel.events.flood1.hello", encodeMessage({ agent_version: "0.0.1", protocol: PROTOCOL_VERSION }));
        stolen.publish("panel.events.flood1.heartbeat", encodeMessage({ agent_version: mark, protocol: PROTOCOL_VERSION, disk: null, load: [0, 0, 0] }));
        await stolen.flush();
        await waitFor(`the panel to read the flood (${mark})`, async () => (await admin().get(`/api/admin/nodes/${node.id}`)).body.agent_version === mark);
        await waitFor("the reconcile on the node's queue", async () => (await waiting()) >= 1);
      };
      await flood("flood-1");
      assert.equal(await waiting(), 1, "one reconcile on the node's queue");
      // Past the 10 s a hello counts again; the reconcile still waiting is not doubled.
      await new Promise((resolve) => setTimeout(resolve, 10_500));
      await flood("flood-2");
      assert.equal(await waiting(), 1, "still one reconcile on the node's queue");
    } finally {
      await stolen.close();
      await panel.close();
    }
  });
});
