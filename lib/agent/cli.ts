import fs from "node:fs/promises";
import { parseArgs } from "node:util";
import { closeNewFiles } from "@/lib/data-dir";
import { ConfigError, env } from "@/lib/env";
import { loadEnvFile } from "@/lib/env-file";
import { writeAtomically } from "@/lib/provisioning/system";
import { nodeCaFile, nodeConfigFile, nodeSeedFile, readNodeConfig, writeNodeConfig } from "./config";
import { loadOrCreateIdentity } from "./identity";
import { startAgent } from "./main";
import { PanelTrustError, parseFingerprint, postToPanel } from "./panel-request";
import { AGENT_VERSION, PROTOCOL_VERSION } from "./protocol";
import { cleartextWarning, isCleartext } from "./transport";

// The node's two commands (docs/nodes.md "Three machines, step by step"), run on the node itself as
// root:
//   panel node join --panel URL --token TOKEN --nats URL [--ca FILE] [--fingerprint SHA256] [--insecure]
//                                                           enrol this machine (once)
//   panel node agent                                       the agent (a systemd unit)
// They read the node's panel.env (HOME_ROOT, nginx, PHP-FPM, MariaDB of the node…) but never a
// panel database: a node has none, and its agent refuses to start where DATABASE_URL is set.
// Between machines, TLS (lib/agent/transport.ts): https:// and tls://, verified; cleartext only
// with --insecure, kept in node.json and warned at every start of the agent.

const USAGE = `Usage (on a node): npm run panel -- node join --panel https://… --token TOKEN --nats tls://…
                     [--ca FILE] [--fingerprint SHA256] [--insecure]
                   npm run panel -- node agent

  --ca FILE           the CA that signed the NATS server's certificate (and the panel's, unless
                      --fingerprint pins that); without it, the system's CAs
  --fingerprint SHA   the SHA-256 fingerprint of the panel's HTTPS certificate, pinned
  --insecure          accept http:// and nats:// (cleartext: jobs carry passwords; warned at every start)`;

class UsageError extends Error {}

/** A refusal of what the command was given, with exit code 2 and no usage text. */
class RefusalError extends Error {}

async function join(options: Record<string, string | boolean | undefined>): Promise<string> {
  const { panel, token, nats, ca, fingerprint } = options;
  const insecure = options.insecure === true;
  if (typeof panel !== "string" || !/^https?:\/\//i.test(panel) || !URL.canParse(panel)) throw new UsageError("--panel must be the panel's URL (its PUBLIC_URL, https://…)");
  if (typeof token !== "string" || !token) throw new UsageError("--token is the token `panel node add` printed");
  if (typeof nats !== "string" || !/^(nats|tls):\/\/\S+$/.test(nats)) throw new UsageError("--nats must be the NATS server's URL as this node reaches it (tls://…)");
  const cleartext = [panel, nats].filter(isCleartext);
  if (cleartext.length > 0 && !insecure) {
    throw new RefusalError(
      `Refused: ${cleartext.join(" and ")} would carry this node's key and its jobs (customers' passwords among them) in cleartext. Use https:// and tls:// (docs/nodes.md "Three machines, step by step"), or add --insecure to accept that.`,
    );
  }
  const pinned = typeof fingerprint === "string" ? parseFingerprint(fingerprint) : null;
  if (typeof fingerprint === "string" && !pinned) throw new UsageError("--fingerprint must be a SHA-256 fingerprint (64 hex digits, colons allowed), as `openssl x509 -noout -fingerprint -sha256` prints it");
  const caPem = typeof ca === "string" ? await fs.readFile(ca, "utf8").catch(() => null) : null;
  if (typeof ca === "string" && !caPem?.includes("BEGIN CERTIFICATE")) throw new UsageError(`--ca must be a PEM certificate file; ${ca} is not`);
  if (insecure) console.warn(cleartextWarning("This join", cleartext.join(" and ") || panel, "--insecure"));
  // The key pair is made here and its seed stays here (0600); only the public key travels.
  const identity = await loadOrCreateIdentity(nodeSeedFile());
  const response = await postToPanel(
    new URL("/api/nodes/join", panel),
    { token, public_key: identity.publicKey, agent_version: AGENT_VERSION, protocol: PROTOCOL_VERSION },
    { ca: caPem, fingerprint: pinned },
  );
  const answer = response.body as { name?: unknown; error?: unknown };
  if (response.status !== 200 || typeof answer.name !== "string") {
    throw new Error(`The panel refused the enrolment: ${typeof answer.error === "string" ? answer.error : `HTTP ${response.status}`}`);
  }
  if (caPem) await writeAtomically(nodeCaFile(), caPem, 0o600);
  await writeNodeConfig({ name: answer.name, nats_url: nats, panel_url: panel, ca_file: caPem ? nodeCaFile() : null, insecure });
  return `This machine is node ${answer.name}; its key is ${identity.publicKey} (seed in ${nodeSeedFile()}, configuration in ${nodeConfigFile()}). Start its agent: npm run panel -- node agent`;
}

async function agent(): Promise<never> {
  if (env().databaseUrl) throw new ConfigError("A node's agent never has the panel's database: remove DATABASE_URL from this node's configuration");
  const config = await readNodeConfig();
  if (isCleartext(config.nats_url)) {
    if (!config.insecure && !env().natsInsecure) {
      throw new ConfigError(`${nodeConfigFile()} names ${config.nats_url}, which is cleartext: enrol this node again over tls://, or set NATS_INSECURE=1 in its panel.env to accept that`);
    }
    console.warn(cleartextWarning(`The agent of node ${config.name}`, config.nats_url, config.insecure ? "joined with --insecure" : "NATS_INSECURE=1"));
  }
  const running = await startAgent(config, nodeSeedFile());
  console.log(`Agent of node ${config.name} connected to ${config.nats_url}`);
  const stop = () => void running.stop().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  await running.stopped;
  // The server closed the connection for good (the node revoked, its key refused).
  throw new Error("The connection to NATS ended and cannot be made again (is this node revoked?)");
}

export async function runCli(argv: string[]): Promise<number> {
  closeNewFiles();
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: {
        panel: { type: "string" },
        token: { type: "string" },
        nats: { type: "string" },
        ca: { type: "string" },
        fingerprint: { type: "string" },
        insecure: { type: "boolean" },
        json: { type: "boolean" },
      },
      allowPositionals: true,
      strict: true,
    });
    loadEnvFile();
    if (positionals[1] === "join") console.log(await join(values));
    else await agent();
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof ConfigError || error instanceof RefusalError || error instanceof PanelTrustError) {
      console.error(error.message);
      return 2;
    }
    console.error(`Error: ${(error as Error).message}`);
    return 1;
  }
}
