import { z } from "zod";
import { NKEY_PUBLIC_KEY, NODE_NAME } from "@/lib/agent/protocol";
import { onlyFields, timestamp } from "@/lib/http/operation";
import { isIPv4 } from "@/lib/net/ip-syntax";

/** `local` is the panel's own machine: never enrolled, renamed or removed. */
export const LOCAL_NODE = "local";

/** A node's name, as the API takes it (`?node=` of the metrics too). */
export const nodeNameField = z
  .string("must be text")
  .trim()
  .toLowerCase()
  .regex(NODE_NAME, "must be 1–31 lower-case letters, digits and inner dashes");
const ipv4Field = z.string("must be text").trim().refine(isIPv4, "must be an IPv4 address");
const hostField = z
  .string("must be text")
  .trim()
  .toLowerCase()
  .regex(/^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, "must be a host name")
  .max(253);

/** POST /api/admin/nodes */
export const createNodeSchema = z.strictObject({
  name: nodeNameField.refine((name) => name !== LOCAL_NODE, "is the panel's own machine"),
  ipv4: ipv4Field,
  ssh_host: hostField.nullable().optional(),
});

const nodeFields = {
  name: nodeNameField,
  ipv4: ipv4Field,
  ssh_host: hostField.nullable(),
  state: z.enum(["active", "draining"], "must be active or draining"),
};

/** PUT /api/admin/nodes/{id}: any of these; `state` only between active and draining. */
export const updateNodeSchema = onlyFields(nodeFields, (field) => `${field} is not a field of a node`);

/** The node's Edit page: every field at once. */
export const nodeFormSchema = z.object(nodeFields);
export type NodeFormInput = z.input<typeof nodeFormSchema>;
export type CreateNodeInput = z.input<typeof createNodeSchema>;

/** `panel node join`: the one-time token, the node's public key, what its agent speaks. */
export const joinNodeSchema = z.strictObject({
  token: z.string().min(1).max(200),
  public_key: z.string().regex(NKEY_PUBLIC_KEY, "must be an NKEY user's public key"),
  agent_version: z.string().max(40),
  protocol: z.number().int().positive(),
});

export const NODE_STATES = ["active", "draining", "unreachable", "outdated"] as const;

export const nodeSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  ipv4: z.string().nullable(),
  ssh_host: z.string().nullable(),
  state: z.enum(NODE_STATES),
  /** Set to take no new accounts (state `draining`, or shown as `unreachable`/`outdated` while that is worse). */
  draining: z.boolean(),
  /** Whether the node's agent has joined (its key is known). `local` needs none. */
  enrolled: z.boolean(),
  last_heartbeat_at: timestamp.nullable(),
  agent_version: z.string().nullable(),
  accounts: z.number().int(),
  disk: z.object({ total_bytes: z.number(), used_bytes: z.number() }).nullable(),
  load: z.array(z.number()).nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

export const nodeListSchema = z.object({ nodes: z.array(nodeSchema) });

/** The answer of POST /api/admin/nodes: the node and its one-time enrolment token (15 min). */
export const createdNodeSchema = nodeSchema.extend({ enrolment_token: z.string(), enrolment_expires_at: timestamp });
