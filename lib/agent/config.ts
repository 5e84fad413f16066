import fs from "node:fs/promises";
import path from "node:path";
import { env } from "@/lib/env";
import { writeAtomically } from "@/lib/provisioning/system";
import { NODE_NAME } from "./protocol";

// What a node knows of its panel: written by `panel node join` into DATA_DIR/node.json (0600),
// read by `panel node agent`. The node's NKEY seed is DATA_DIR/node.nk, made by the join; the CA
// given to the join (`--ca`) is kept as DATA_DIR/panel-ca.pem.

export interface NodeConfig {
  name: string;
  nats_url: string;
  panel_url: string;
  /** The CA that verifies the NATS server's certificate; null: the system's. */
  ca_file?: string | null;
  /** Cleartext accepted at the join (`--insecure`): warned at every start. */
  insecure?: boolean;
}

export const nodeConfigFile = () => path.join(env().dataDir, "node.json");
export const nodeSeedFile = () => path.join(env().dataDir, "node.nk");
export const nodeCaFile = () => path.join(env().dataDir, "panel-ca.pem");

export async function readNodeConfig(): Promise<NodeConfig> {
  const file = nodeConfigFile();
  const text = await fs.readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") throw new Error(`${file} does not exist: enrol this node first with \`panel node join\``);
    throw error;
  });
  const config = JSON.parse(text) as NodeConfig;
  if (!NODE_NAME.test(config.name) || typeof config.nats_url !== "string") throw new Error(`${file} is damaged: enrol this node again`);
  return config;
}

export async function writeNodeConfig(config: NodeConfig): Promise<void> {
  await fs.mkdir(env().dataDir, { recursive: true, mode: 0o700 });
  await writeAtomically(nodeConfigFile(), `${JSON.stringify(config, null, 2)}\n`, 0o600);
}
