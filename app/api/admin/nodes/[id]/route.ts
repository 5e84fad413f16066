import { getDb } from "@/db/client";
import { actorOf } from "@/lib/auth/authenticate";
import { withApiKey } from "@/lib/http/with-api-key";
import { nodeOperations } from "@/lib/nodes/operations";
import { deleteNode, getNode, updateNode } from "@/lib/nodes/service";

// GET /api/admin/nodes/{id} — one node
export const GET = withApiKey(nodeOperations.get, async ({ params }) => getNode(await getDb(), params.id));

// PUT /api/admin/nodes/{id} — rename (before it joins), IPv4, SSH host, active/draining
export const PUT = withApiKey(nodeOperations.update, async ({ principal, params, body }) => updateNode(await getDb(), params.id, body, actorOf(principal)));

// DELETE /api/admin/nodes/{id} — revoke: its NKEY leaves the NATS authorization
export const DELETE = withApiKey(nodeOperations.delete, async ({ principal, params }) => deleteNode(await getDb(), params.id, actorOf(principal)));
