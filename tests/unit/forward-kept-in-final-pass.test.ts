import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { DEFAULT_PHP_SETTINGS } from "@/lib/php-settings/schemas";
import { applyForwards } from "@/lib/provisioning/forwards";
import { applyAllSites, type HostedAccount } from "@/lib/provisioning/hosting";
import { forwardEnd, siteFilePath } from "@/lib/provisioning/nginx";
import { startWebServers, type WebServers } from "../support/web-servers";

// A move's switch makes the source's sites forwards to the target before the target serves, while
// the panel still holds the account as "switching" (read-only on the source). A reconcile of the
// source in that moment (its agent says hello) used to write the read-only site over the forward,
// and both copies served until the cleaning forwarded again (docs/nodes.md "Moving accounts").
// Seen to fail on the old applyAllSites: the forward replaced by the read-only site.

const root = fs.mkdtempSync(path.join(os.tmpdir(), "panel-forward-final-pass-"));
let servers: WebServers;

before(async () => {
  servers = await startWebServers(root);
  Object.assign(process.env, { ...servers.env, HOME_ROOT: path.join(root, "home"), DATA_DIR: path.join(root, "data"), PANEL_ENV_FILE: "/dev/null" });
  fs.mkdirSync(path.join(root, "home", "alice", "public_html"), { recursive: true });
});

after(async () => {
  await servers?.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

const account = (state: Partial<HostedAccount>): HostedAccount => ({
  username: "alice",
  suspended: false,
  php: DEFAULT_PHP_SETTINGS,
  domains: [{ domain: "alice.example", serverNames: ["alice.example", "www.alice.example"], path: "public_html", profile: "static", phpVersion: null, proxySocket: null }],
  ...state,
});

const isForward = () => forwardEnd("alice.example", fs.readFileSync(siteFilePath("alice.example"), "utf8")) !== null;

test("a reconcile during the switch keeps the source's forward; serving again (a failed switch) replaces it", async () => {
  const finalPass = account({ suspended: true, readOnly: true });
  await applyAllSites([finalPass]);
  assert.equal(isForward(), false, "the read-only site before the forward");
  await applyForwards({ target: "192.0.2.3", until: new Date(Date.now() + 600_000).toISOString(), sites: [{ domain: "alice.example", server_names: ["alice.example", "www.alice.example"] }] });
  assert.equal(isForward(), true);
  await applyAllSites([finalPass]);
  assert.equal(isForward(), true, "the reconcile kept the forward");
  await applyAllSites([account({})]);
  assert.equal(isForward(), false, "the source serves again");
});
