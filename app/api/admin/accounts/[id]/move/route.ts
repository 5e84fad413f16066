import { getDb } from "@/db/client";
import { actorOf } from "@/lib/auth/authenticate";
import { withApiKey } from "@/lib/http/with-api-key";
import { moveOperations } from "@/lib/moves/operations";
import { cancelMove, getMove, startMove } from "@/lib/moves/service";

// GET /api/admin/accounts/{id}/move — its latest move, with each step's timing
export const GET = withApiKey(moveOperations.get, async ({ params }) => getMove(await getDb(), params.id));

// POST /api/admin/accounts/{id}/move — move the account to another node (202; lib/moves/driver.ts does it)
export const POST = withApiKey(moveOperations.start, async ({ principal, params, body }) => startMove(await getDb(), params.id, body, actorOf(principal)));

// DELETE /api/admin/accounts/{id}/move — cancel its move before the switch
export const DELETE = withApiKey(moveOperations.cancel, async ({ principal, params }) => cancelMove(await getDb(), params.id, actorOf(principal)));
