import { getDb } from "@/db/client";
import { actorOf } from "@/lib/auth/authenticate";
import { withApiKey } from "@/lib/http/with-api-key";
import { moveOperations } from "@/lib/moves/operations";
import { drainNode } from "@/lib/moves/service";

// POST /api/admin/nodes/{id}/drain — draining, and every account moved to `to`, one by one
export const POST = withApiKey(moveOperations.drain, async ({ principal, params, body }) => drainNode(await getDb(), params.id, body, actorOf(principal)));
