import { getDb } from "@/db/client";
import { actorOf } from "@/lib/auth/authenticate";
import { withApiKey } from "@/lib/http/with-api-key";
import { nodeOperations } from "@/lib/nodes/operations";
import { createNode, listNodes } from "@/lib/nodes/service";

// GET /api/admin/nodes — every node with its state, heartbeat and accounts
export const GET = withApiKey(nodeOperations.list, async () => listNodes(await getDb()));

// POST /api/admin/nodes — add a node; its enrolment token is in this answer only
export const POST = withApiKey(nodeOperations.create, async ({ principal, body }) => createNode(await getDb(), body, actorOf(principal)));
