import { parseArgs } from "node:util";
import { closeNewFiles } from "@/lib/data-dir";
import { ConfigError, env } from "@/lib/env";
import { loadEnvFile } from "@/lib/env-file";
import { nodeConfigFile, nodeSeedFile, readNodeConfig, writeNodeConfig } from "./config";
import { loadOrCreateIdentity } from "./identity";
import { startAgent } from "./main";
import { AGENT_VERSION, PROTOCOL_VERSION } from "./protocol";

// The node's two commands (docs/nodes.md "Three machines, step by step"), run on the node itself as
// root:
//   panel node join --panel URL --token TOKEN --nats URL   enrol this machine (once)
//   panel node agent                                       the agent (a systemd unit)
// They read the node's panel.env (HOME_ROOT, nginx, PHP-FPM, MariaDB of the node…) but never a
// panel database: a node has none, and its agent refuses to start where DATABASE_URL is set.

const USAGE = `Usage (on a node): npm run panel -- node join --panel URL --token TOKEN --nats URL
                   npm run panel -- node agent`;

class UsageError extends Error {}

async function join(options: Record<string, string | boolean | undefined>): Promise<string> {
  const panel = options.panel;
  const token = options.token;
  const nats = options.nats;
  if (typeof panel !== "string" || !URL.canParse(panel)) throw new UsageError("--panel must be the panel's URL (its PUBLIC_URL)");
  if (typeof token !== "string" || !token) throw new UsageError("--token is the token `panel node add` printed");
  if (typeof nats !== "string" || !/^(nats|tls):\/\/\S+$/.test(nats)) throw new UsageError("--nats must be the NATS server's URL as this node reaches it (nats://…)");
  // The key pair is made here and its seed stays here (0600); only the public key travels.
  const identity = await loadOrCreateIdentity(nodeSeedFile());
  const response = await fetch(new URL("/api/nodes/join", panel), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token, public_key: identity.publicKey, agent_version: AGENT_VERSION, protocol: PROTOCOL_VERSION }),
    signal: AbortSignal.timeout(30_000),
  });
  const answer = (await response.json().catch(() => ({}))) as { name?: string; error?: string };
  if (!response.ok || typeof answer.name !== "string") throw new Error(`The panel refused the enrolment: ${answer.error ?? `HTTP ${response.status}`}`);
  await writeNodeConfig({ name: answer.name, nats_url: nats, panel_url: panel });
  return `This machine is node ${answer.name}; its key is ${identity.publicKey} (seed in ${nodeSeedFile()}, configuration in ${nodeConfigFile()}). Start its agent: npm run panel -- node agent`;
}

async function agent(): Promise<never> {
  if (env().databaseUrl) throw new ConfigError("A node's agent never has the panel's database: remove DATABASE_URL from this node's configuration");
  const config = await readNodeConfig();
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
      options: { panel: { type: "string" }, token: { type: "string" }, nats: { type: "string" }, json: { type: "boolean" } },
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
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 2;
    }
    console.error(`Error: ${(error as Error).message}`);
    return 1;
  }
}
