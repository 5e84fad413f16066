"use server";

import { runAdminFormAction } from "@/lib/admin-session/form-action";
import { validationError } from "@/lib/errors";
import { idField } from "@/lib/http/operation";
import { drainNodeSchema } from "@/lib/moves/schemas";
import { drainNode } from "@/lib/moves/service";
import { type CreateNodeInput, createNodeSchema, type NodeFormInput, nodeFormSchema } from "@/lib/nodes/schemas";
import { createNode, deleteNode, getNode, joinCommand, updateNode } from "@/lib/nodes/service";

// Server actions of the Nodes pages; the services parse the input with the same schemas.

/** What the Create page shows once: the command that enrols the machine, with its token. */
export interface NewNode {
  name: string;
  token: string;
  command: string;
  expiresAt: string;
}

export async function createNodeAction(input: CreateNodeInput) {
  return runAdminFormAction(
    "/admin/nodes",
    (db, actor) => createNode(db, createNodeSchema.parse(input), actor),
    (node): NewNode => ({ name: node.name, token: node.enrolment_token, command: joinCommand(node.enrolment_token), expiresAt: node.enrolment_expires_at }),
  );
}

export async function updateNodeAction(id: number, input: NodeFormInput) {
  return runAdminFormAction("/admin/nodes", (db, actor) => updateNode(db, idField.parse(id), nodeFormSchema.parse(input), actor));
}

/** Draining (no new accounts) or active again. */
export async function setNodeStateAction(id: number, state: "active" | "draining") {
  return runAdminFormAction("/admin/nodes", (db, actor) => updateNode(db, idField.parse(id), { state: nodeFormSchema.shape.state.parse(state) }, actor));
}

/** Revoke, confirmed by the node's name typed again. */
export async function revokeNodeAction(id: number, confirmation: string) {
  return runAdminFormAction("/admin/nodes", async (db, actor) => {
    const node = await getNode(db, idField.parse(id));
    if (confirmation.trim().toLowerCase() !== node.name) throw validationError("confirmation", `Not the node's name: type ${node.name}`);
    return deleteNode(db, node.id, actor);
  });
}

/** Drain: no new accounts, and each of its accounts moved to `to`, one after another. */
export async function drainNodeAction(id: number, to: string) {
  return runAdminFormAction("/admin/nodes", (db, actor) => drainNode(db, idField.parse(id), drainNodeSchema.parse({ to }), actor));
}
