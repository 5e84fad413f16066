import { AGENT_VERSION, PROTOCOL_VERSION } from "./protocol";

// The operations a node carries out for the panel, by name: each applies a desired state through
// lib/provisioning (never a command "do X once"), so running a job twice — JetStream delivers at
// least once — changes nothing the second time. The panel's own machine (`local`) runs the same
// functions in its process (lib/nodes/dispatch.ts).

export type Operation = (args: unknown) => Promise<unknown>;

export const nodeOperations: Record<string, Operation> = {
  /** Who answers: the agent's version and protocol (a round trip through the node's queue). */
  async ping() {
    return { agent_version: AGENT_VERSION, protocol: PROTOCOL_VERSION };
  },
};
